CREATE TABLE "usage_records" (
	"request_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text NOT NULL,
	"model" text NOT NULL,
	"base_model_id" text NOT NULL,
	"adapter" text,
	"kind" text NOT NULL,
	"prompt_tokens" integer NOT NULL,
	"cached_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"images" integer NOT NULL,
	"image_steps" integer NOT NULL,
	"image_pixels" bigint NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	CONSTRAINT "usage_records_kind" CHECK ("usage_records"."kind" in ('completion', 'chat', 'embedding', 'image')),
	CONSTRAINT "usage_records_outcome" CHECK ("usage_records"."outcome" in ('finished', 'cancelled', 'failed')),
	CONSTRAINT "usage_records_counts" CHECK ("usage_records"."prompt_tokens" >= 0 and "usage_records"."cached_tokens" between 0 and "usage_records"."prompt_tokens" and "usage_records"."completion_tokens" >= 0 and "usage_records"."images" >= 0 and "usage_records"."image_steps" >= 0 and "usage_records"."image_pixels" >= 0)
);
--> statement-breakpoint
CREATE INDEX "usage_records_account_ended_idx" ON "usage_records" USING btree ("account_id","ended_at");