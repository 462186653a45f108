ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_role";--> statement-breakpoint
-- Keys that were "user" keys are member keys: the role's new name (issue 13), same rights.
UPDATE "api_keys" SET "role" = 'member' WHERE "role" = 'user';--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_role" CHECK ("api_keys"."role" in ('admin', 'member'));
