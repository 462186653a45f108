ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_role";--> statement-breakpoint
-- Issue 14: keys have scopes instead of a role. An admin key keeps every right it had (all three
-- scopes); a member key keeps inference and models.
ALTER TABLE "api_keys" ADD COLUMN "scopes" text[];--> statement-breakpoint
UPDATE "api_keys" SET "scopes" = CASE WHEN "role" = 'admin' THEN ARRAY['inference', 'models', 'admin']::text[] ELSE ARRAY['inference', 'models']::text[] END;--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "scopes" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" DROP COLUMN "role";--> statement-breakpoint
-- A key of the built-in account could change the operator's base models: none may exist.
DELETE FROM "api_keys" WHERE "account_id" = 'hearth';--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes" CHECK (cardinality("api_keys"."scopes") > 0 and "api_keys"."scopes" <@ array['inference', 'models', 'admin']::text[]);--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_not_builtin" CHECK ("api_keys"."account_id" <> 'hearth');
