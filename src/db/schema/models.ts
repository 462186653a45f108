import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";

import type { AdapterFormat, ModelKind, ModelState } from "../../domain/vocabulary.js";

export { ADAPTER_FORMATS, MODEL_KINDS, MODEL_STATES } from "../../domain/vocabulary.js";
export type { AdapterFormat, ModelKind, ModelState };

/**
 * Models, named `accounts/<account_id>/models/<model_id>`. A base model is a GGUF
 * file; a LoRA names its base model in `base_model` (known at creation or, at the
 * latest, once validated). `public` base models of the built-in account are visible
 * to every account. `artifact_key` is the storage key of a LoRA's llama.cpp GGUF,
 * a content-hash path written by its first deploy.
 */
export const models = pgTable(
  "models",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    modelId: text("model_id").notNull(),
    kind: text("kind").$type<ModelKind>().notNull(),
    displayName: text("display_name").notNull().default(""),
    description: text("description").notNull().default(""),
    baseModel: text("base_model"),
    state: text("state").$type<ModelState>().notNull(),
    stateReason: text("state_reason"),
    filePath: text("file_path"),
    contextLength: integer("context_length"),
    embeddingLength: integer("embedding_length"),
    conversationConfig: jsonb("conversation_config").$type<Record<string, unknown>>(),
    adapterFormat: text("adapter_format").$type<AdapterFormat>(),
    adapterRank: integer("adapter_rank"),
    artifactKey: text("artifact_key"),
    public: boolean("public").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.modelId] }),
    check("models_kind", sql`${t.kind} in ('base', 'lora', 'image')`),
    check("models_state", sql`${t.state} in ('UPLOADING', 'VALIDATING', 'READY', 'FAILED')`),
    check("models_model_id_not_empty", sql`length(${t.modelId}) between 1 and 255`),
    check(
      "models_base_model_matches_kind",
      sql`${t.kind} = 'lora' or (${t.kind} in ('base', 'image') and ${t.baseModel} is null)`,
    ),
    check(
      "models_ready_lora_has_base_model",
      sql`not (${t.kind} = 'lora' and ${t.state} = 'READY' and ${t.baseModel} is null)`,
    ),
    check("models_adapter_format", sql`${t.adapterFormat} is null or ${t.adapterFormat} in ('peft', 'gguf')`),
    index("models_artifact_key_idx").on(t.artifactKey),
  ],
);

export type Model = typeof models.$inferSelect;
export type NewModel = typeof models.$inferInsert;
