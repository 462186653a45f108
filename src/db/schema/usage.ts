import { sql } from "drizzle-orm";
import { bigint, boolean, check, date, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";

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
    /** The batch the request was a line of (docs/batch.md); null for an interactive request. */
    batchId: text("batch_id"),
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
    // The roll-up takes the oldest records first, whatever their account.
    index("usage_records_ended_idx").on(t.endedAt),
  ],
);

export type UsageRow = typeof usageRecords.$inferSelect;

/**
 * The usage records of whole UTC days past the retention, summed (queries/usage-rollup.ts):
 * one row per day and everything a report or a price tells apart (account, key, model and its
 * base model, adapter, kind). Sums are bigint: a day's can pass an integer's range.
 */
export const usageDaily = pgTable(
  "usage_daily",
  {
    /** The UTC day its records ended on. */
    day: date("day", { mode: "string" }).notNull(),
    accountId: text("account_id").notNull(),
    keyId: text("key_id").notNull(),
    model: text("model").notNull(),
    baseModelId: text("base_model_id").notNull(),
    adapter: text("adapter"),
    kind: text("kind").$type<UsageKind>().notNull(),
    requests: bigint("requests", { mode: "number" }).notNull(),
    /** Of `requests`, those that ended cancelled or failed (the rest finished). */
    cancelled: bigint("cancelled", { mode: "number" }).notNull(),
    failed: bigint("failed", { mode: "number" }).notNull(),
    promptTokens: bigint("prompt_tokens", { mode: "number" }).notNull(),
    cachedTokens: bigint("cached_tokens", { mode: "number" }).notNull(),
    completionTokens: bigint("completion_tokens", { mode: "number" }).notNull(),
    images: bigint("images", { mode: "number" }).notNull(),
    imageSteps: bigint("image_steps", { mode: "number" }).notNull(),
    imagePixels: bigint("image_pixels", { mode: "number" }).notNull(),
  },
  (t) => [
    // A request without an adapter has none (null): one row all the same (PostgreSQL 15+).
    unique("usage_daily_key")
      .on(t.day, t.accountId, t.keyId, t.model, t.baseModelId, t.adapter, t.kind)
      .nullsNotDistinct(),
    index("usage_daily_account_day_idx").on(t.accountId, t.day),
  ],
);

/**
 * How far the roll-up has gone: one row, written with each day it rolls. Records that ended
 * before `rolled_before` are in usage_daily, and the meter no longer writes such a record
 * (docs/usage.md, "Retention").
 */
export const usageRollup = pgTable(
  "usage_rollup",
  {
    /** Always true: the primary key that keeps the table at one row. */
    single: boolean("single").primaryKey().default(true),
    rolledBefore: timestamp("rolled_before", { withTimezone: true }).notNull(),
  },
  (t) => [check("usage_rollup_single", sql`${t.single}`)],
);

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
