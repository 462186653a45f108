ALTER TABLE "accounts" ADD COLUMN "requests_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "tokens_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_in_flight_requests" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_models" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_stored_bytes" bigint;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_limits_positive" CHECK (coalesce("accounts"."requests_per_minute", 1) > 0 and coalesce("accounts"."tokens_per_minute", 1) > 0 and coalesce("accounts"."max_in_flight_requests", 1) > 0 and coalesce("accounts"."max_models", 1) > 0 and coalesce("accounts"."max_stored_bytes", 1) > 0);