CREATE TABLE "batch_results" (
	"batch_id" text NOT NULL,
	"line" integer NOT NULL,
	"custom_id" text NOT NULL,
	"status_code" integer,
	"request_id" text,
	"body" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "batch_results_batch_id_line_pk" PRIMARY KEY("batch_id","line")
);
--> statement-breakpoint
CREATE TABLE "batches" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text NOT NULL,
	"endpoint" text NOT NULL,
	"input_file_id" text NOT NULL,
	"completion_window" text NOT NULL,
	"metadata" jsonb,
	"status" text NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"output_file_id" text,
	"error_file_id" text,
	"errors" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"in_progress_at" timestamp with time zone,
	"finalizing_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"expired_at" timestamp with time zone,
	"cancelling_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"runner" text,
	"runner_until" timestamp with time zone,
	CONSTRAINT "batches_status" CHECK ("batches"."status" in ('validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"purpose" text NOT NULL,
	"filename" text NOT NULL,
	"bytes" bigint NOT NULL,
	"storage_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "files_purpose" CHECK ("files"."purpose" in ('batch', 'batch_output'))
);
--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "batch_id" text;--> statement-breakpoint
ALTER TABLE "batch_results" ADD CONSTRAINT "batch_results_batch_id_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."batches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "batches_account_created_idx" ON "batches" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "batches_open_idx" ON "batches" USING btree ("created_at") WHERE "batches"."status" in ('validating', 'in_progress', 'finalizing', 'cancelling');--> statement-breakpoint
CREATE INDEX "files_account_created_idx" ON "files" USING btree ("account_id","created_at");