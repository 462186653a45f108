import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

import type { UsageKind, UsageOutcome } from "../../domain/usage.js";

/**
 * What each inference request used, one row per request (its ID is the key, so a record
 * written twice counts once: docs/usage.md). Rows outlive the account's keys and models: they
 * name them without a foreign key, as a bill would.
 */
export const usageRecords = pgTable(
  "usage_records",
  {
    requestId: text("request_id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** The API key's ID (a web session's requests use the key it signed in with). */
    keyId: text("key_id").notNull(),
    /** The public name asked for, accounts/<account>/models/<model>. */
    model: text("model").notNull(),
    baseModelId: text("base_model_id").notNull(),
    /** The adapter's artifact (content-hash storage key), for an adapter's request. */
    adapter: text("adapter"),
    kind: text("kind").$type<UsageKind>().notNull(),
    promptTokens: integer("prompt_tokens").notNull(),
    cachedTokens: integer("cached_tokens").notNull(),
    completionTokens: integer("completion_tokens").notNull(),
    images: integer("images").notNull(),
    imageSteps: integer("image_steps").notNull(),
    imagePixels: bigint("image_pixels", { mode: "number" }).notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true }).notNull(),
    outcome: text("outcome").$type<UsageOutcome>().notNull(),
  },
  (t) => [
    check("usage_records_kind", sql`${t.kind} in ('completion', 'chat', 'embedding', 'image')`),
    check("usage_records_outcome", sql`${t.outcome} in ('finished', 'cancelled', 'failed')`),
    check(
      "usage_records_counts",
      sql`${t.promptTokens} >= 0 and ${t.cachedTokens} between 0 and ${t.promptTokens} and ${t.completionTokens} >= 0 and ${t.images} >= 0 and ${t.imageSteps} >= 0 and ${t.imagePixels} >= 0`,
    ),
    index("usage_records_account_ended_idx").on(t.accountId, t.endedAt),
  ],
);

export type UsageRow = typeof usageRecords.$inferSelect;

/**
 * When each model began and stopped serving: a row for every move into DEPLOYED and out of it
 * (to UNDEPLOYING, FAILED, or the deployment's deletion, the model's included), written by a
 * trigger on `deployments` (migration 0009), so that no path that changes a deployment can miss
 * one. Deployed hours are the spans between them (docs/usage.md).
 */
export const deploymentEvents = pgTable(
  "deployment_events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: text("account_id").notNull(),
    modelId: text("model_id").notNull(),
    event: text("event").$type<"deployed" | "undeployed">().notNull(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("deployment_events_event", sql`${t.event} in ('deployed', 'undeployed')`),
    index("deployment_events_account_model_at_idx").on(t.accountId, t.modelId, t.at),
  ],
);
