ALTER TABLE "models" DROP CONSTRAINT "models_base_model_matches_kind";--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "adapter_format" text;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "adapter_rank" integer;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "artifact_key" text;--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "deployed_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "models_artifact_key_idx" ON "models" USING btree ("artifact_key");--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_ready_lora_has_base_model" CHECK (not ("models"."kind" = 'lora' and "models"."state" = 'READY' and "models"."base_model" is null));--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_adapter_format" CHECK ("models"."adapter_format" is null or "models"."adapter_format" in ('peft', 'gguf'));--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_base_model_matches_kind" CHECK ("models"."kind" = 'lora' or ("models"."kind" = 'base' and "models"."base_model" is null));