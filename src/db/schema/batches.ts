import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import type { BatchLineError, BatchStatus, FilePurpose } from "../../domain/batch.js";

/**
 * Files of the files API (docs/batch.md): batches' input, uploaded by the account, and their
 * output and error files, written by Hearth. The content is in the BlobStore under
 * `storageKey`; `bytes` counts in the account's stored-bytes quota.
 */
export const files = pgTable(
  "files",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    purpose: text("purpose").$type<FilePurpose>().notNull(),
    filename: text("filename").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    storageKey: text("storage_key").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("files_purpose", sql`${t.purpose} in ('batch', 'batch_output')`),
    index("files_account_created_idx").on(t.accountId, t.createdAt),
  ],
);
export type FileRow = typeof files.$inferSelect;

/**
 * Batches: what to run (the input file's lines against one endpoint), their state and counts,
 * and which API process runs them now (`runner`, its lease until `runnerUntil`), so that
 * another takes a batch over when that process dies.
 */
export const batches = pgTable(
  "batches",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** The key that created it: its lines run as that key, and stop when it is revoked. */
    keyId: text("key_id").notNull(),
    endpoint: text("endpoint").notNull(),
    inputFileId: text("input_file_id").notNull(),
    completionWindow: text("completion_window").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>(),
    status: text("status").$type<BatchStatus>().notNull(),
    total: integer("total").notNull().default(0),
    completed: integer("completed").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    outputFileId: text("output_file_id"),
    errorFileId: text("error_file_id"),
    errors: jsonb("errors").$type<BatchLineError[]>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    inProgressAt: timestamp("in_progress_at", { withTimezone: true }),
    finalizingAt: timestamp("finalizing_at", { withTimezone: true }),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    failedAt: timestamp("failed_at", { withTimezone: true }),
    expiredAt: timestamp("expired_at", { withTimezone: true }),
    cancellingAt: timestamp("cancelling_at", { withTimezone: true }),
    cancelledAt: timestamp("cancelled_at", { withTimezone: true }),
    runner: text("runner"),
    runnerUntil: timestamp("runner_until", { withTimezone: true }),
  },
  (t) => [
    check(
      "batches_status",
      sql`${t.status} in ('validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled')`,
    ),
    index("batches_account_created_idx").on(t.accountId, t.createdAt),
    index("batches_open_idx")
      .on(t.createdAt)
      .where(sql`${t.status} in ('validating', 'in_progress', 'finalizing', 'cancelling')`),
  ],
);
export type BatchRow = typeof batches.$inferSelect;

/**
 * Each line's one result: the first written wins (the key is the batch and the line), so a
 * line that ran twice (its runner died after the answer, before it knew) appears once.
 */
export const batchResults = pgTable(
  "batch_results",
  {
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id, { onDelete: "cascade" }),
    line: integer("line").notNull(),
    customId: text("custom_id").notNull(),
    /** The answer's status; null for a line that got none (the batch expired or was cancelled first). */
    statusCode: integer("status_code"),
    requestId: text("request_id"),
    body: jsonb("body"),
    error: jsonb("error").$type<{ code: string; message: string }>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.line] })],
);
export type BatchResultRow = typeof batchResults.$inferSelect;
