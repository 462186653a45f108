ALTER TABLE "models" DROP CONSTRAINT "models_kind";--> statement-breakpoint
ALTER TABLE "models" DROP CONSTRAINT "models_base_model_matches_kind";--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_kind" CHECK ("models"."kind" in ('base', 'lora', 'image'));--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_base_model_matches_kind" CHECK ("models"."kind" = 'lora' or ("models"."kind" in ('base', 'image') and "models"."base_model" is null));