CREATE TABLE "deployment_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "deployment_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" text NOT NULL,
	"model_id" text NOT NULL,
	"event" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deployment_events_event" CHECK ("deployment_events"."event" in ('deployed', 'undeployed'))
);
--> statement-breakpoint
CREATE INDEX "deployment_events_account_model_at_idx" ON "deployment_events" USING btree ("account_id","model_id","at");