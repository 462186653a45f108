CREATE TABLE "usage_daily" (
	"day" date NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text NOT NULL,
	"model" text NOT NULL,
	"base_model_id" text NOT NULL,
	"adapter" text,
	"kind" text NOT NULL,
	"requests" bigint NOT NULL,
	"cancelled" bigint NOT NULL,
	"failed" bigint NOT NULL,
	"prompt_tokens" bigint NOT NULL,
	"cached_tokens" bigint NOT NULL,
	"completion_tokens" bigint NOT NULL,
	"images" bigint NOT NULL,
	"image_steps" bigint NOT NULL,
	"image_pixels" bigint NOT NULL,
	CONSTRAINT "usage_daily_key" UNIQUE NULLS NOT DISTINCT("day","account_id","key_id","model","base_model_id","adapter","kind")
);
--> statement-breakpoint
CREATE TABLE "usage_rollup" (
	"single" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"rolled_before" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_rollup_single" CHECK ("usage_rollup"."single")
);
--> statement-breakpoint
CREATE INDEX "usage_daily_account_day_idx" ON "usage_daily" USING btree ("account_id","day");--> statement-breakpoint
CREATE INDEX "usage_records_ended_idx" ON "usage_records" USING btree ("ended_at");