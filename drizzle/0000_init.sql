CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"display_name" text NOT NULL,
	"enterprise" boolean DEFAULT false NOT NULL,
	"max_deployed_models" integer DEFAULT 100 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_id_format" CHECK ("accounts"."id" ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
	CONSTRAINT "accounts_max_deployed_models_non_negative" CHECK ("accounts"."max_deployed_models" >= 0)
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_prefix_unique" UNIQUE("prefix"),
	CONSTRAINT "api_keys_role" CHECK ("api_keys"."role" in ('admin', 'user')),
	CONSTRAINT "api_keys_hash_format" CHECK ("api_keys"."hash" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "models" (
	"account_id" text NOT NULL,
	"model_id" text NOT NULL,
	"kind" text NOT NULL,
	"display_name" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"base_model" text,
	"state" text NOT NULL,
	"state_reason" text,
	"file_path" text,
	"context_length" integer,
	"embedding_length" integer,
	"conversation_config" jsonb,
	"public" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "models_account_id_model_id_pk" PRIMARY KEY("account_id","model_id"),
	CONSTRAINT "models_kind" CHECK ("models"."kind" in ('base', 'lora')),
	CONSTRAINT "models_state" CHECK ("models"."state" in ('UPLOADING', 'VALIDATING', 'READY', 'FAILED')),
	CONSTRAINT "models_model_id_not_empty" CHECK (length("models"."model_id") between 1 and 255),
	CONSTRAINT "models_base_model_matches_kind" CHECK (("models"."kind" = 'lora' and "models"."base_model" is not null) or ("models"."kind" = 'base' and "models"."base_model" is null))
);
--> statement-breakpoint
CREATE TABLE "deployments" (
	"account_id" text NOT NULL,
	"model_id" text NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"artifact_path" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deployments_account_id_model_id_pk" PRIMARY KEY("account_id","model_id"),
	CONSTRAINT "deployments_state" CHECK ("deployments"."state" in ('DEPLOYING', 'DEPLOYED', 'UNDEPLOYING', 'FAILED'))
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_model_fk" FOREIGN KEY ("account_id","model_id") REFERENCES "public"."models"("account_id","model_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_account_id_idx" ON "api_keys" USING btree ("account_id");