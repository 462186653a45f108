import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { batches, batchResults, type BatchResultRow, type BatchRow } from "../schema/batches.js";
import { CANCELLABLE_BATCH_STATUSES, OPEN_BATCH_STATUSES, type BatchStatus } from "../../domain/batch.js";

export async function insertBatch(db: Db, batch: typeof batches.$inferInsert): Promise<BatchRow> {
  const [row] = await db.insert(batches).values(batch).returning();
  return row!;
}

/** The account's batch; another account's is undefined, as a missing one. */
export async function getBatch(db: Db, accountId: string, id: string): Promise<BatchRow | undefined> {
  const [row] = await db
    .select()
    .from(batches)
    .where(and(eq(batches.id, id), eq(batches.accountId, accountId)));
  return row;
}

/** The account's batches, newest first, after `after` (its page's last), `limit` of them. */
export async function listBatches(
  db: Db,
  accountId: string,
  options: { after?: BatchRow; limit: number },
): Promise<BatchRow[]> {
  const { after, limit } = options;
  return db
    .select()
    .from(batches)
    .where(
      and(
        eq(batches.accountId, accountId),
        after
          ? or(
              lt(batches.createdAt, after.createdAt),
              and(eq(batches.createdAt, after.createdAt), lt(batches.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(batches.createdAt), desc(batches.id))
    .limit(limit);
}

/** Every account's batches, newest first (the operators' console). */
export async function recentBatches(db: Db, limit: number): Promise<BatchRow[]> {
  return db.select().from(batches).orderBy(desc(batches.createdAt), desc(batches.id)).limit(limit);
}

const leaseEnd = (ms: number) => sql`now() + ${`${ms} milliseconds`}::interval`;

/**
 * Takes an open batch nobody runs (no runner, or its lease lapsed: that runner died), oldest
 * first, for `runner` until `leaseMs` from now. Two runners never take the same one.
 */
export async function claimBatch(db: Db, runner: string, leaseMs: number): Promise<BatchRow | undefined> {
  const rows = await db.execute<{ id: string }>(sql`
    update ${batches} set runner = ${runner}, runner_until = ${leaseEnd(leaseMs)}
    where id = (
      select id from ${batches}
      where status in ${sql.raw(`(${OPEN_BATCH_STATUSES.map((s) => `'${s}'`).join(", ")})`)}
        and (runner_until is null or runner_until < now())
      order by created_at
      limit 1
      for update skip locked
    )
    returning id`);
  const id = rowsOf<{ id: string }>(rows)[0]?.id;
  if (!id) return undefined;
  const [row] = await db.select().from(batches).where(eq(batches.id, id));
  return row;
}

/** Extends `runner`'s lease; the batch as it is now, or undefined when the lease is no longer its own. */
export async function renewBatch(db: Db, id: string, runner: string, leaseMs: number): Promise<BatchRow | undefined> {
  const [row] = await db
    .update(batches)
    .set({ runnerUntil: leaseEnd(leaseMs) })
    .where(and(eq(batches.id, id), eq(batches.runner, runner)))
    .returning();
  return row;
}

/** Gives a batch back (its runner stops), so that any runner may take it at once. */
export async function releaseBatch(db: Db, id: string, runner: string): Promise<void> {
  await db
    .update(batches)
    .set({ runner: null, runnerUntil: null })
    .where(and(eq(batches.id, id), eq(batches.runner, runner)));
}

/** Moves `runner`'s batch from one of `from` to `to`, with what else changes; the row, or undefined if it was not in `from`. */
export async function moveBatch(
  db: Db,
  id: string,
  runner: string,
  from: readonly BatchStatus[],
  to: BatchStatus,
  set: Partial<BatchRow> = {},
): Promise<BatchRow | undefined> {
  const [row] = await db
    .update(batches)
    .set({ ...set, status: to, ...stampOf(to) })
    .where(and(eq(batches.id, id), eq(batches.runner, runner), inArray(batches.status, [...from])))
    .returning();
  return row;
}

/** The time column each state sets when a batch enters it. */
function stampOf(status: BatchStatus): Partial<BatchRow> {
  const now = new Date();
  switch (status) {
    case "in_progress":
      return { inProgressAt: now };
    case "finalizing":
      return { finalizingAt: now };
    case "completed":
      return { completedAt: now };
    case "failed":
      return { failedAt: now };
    case "expired":
      return { expiredAt: now };
    case "cancelling":
      return { cancellingAt: now };
    case "cancelled":
      return { cancelledAt: now };
    default:
      return {};
  }
}

/** Asks a batch to stop: one still open moves to cancelling; the row as it is after. */
export async function cancelBatch(db: Db, accountId: string, id: string): Promise<BatchRow | undefined> {
  const [moved] = await db
    .update(batches)
    .set({ status: "cancelling", cancellingAt: new Date() })
    .where(
      and(
        eq(batches.id, id),
        eq(batches.accountId, accountId),
        inArray(batches.status, [...CANCELLABLE_BATCH_STATUSES]),
      ),
    )
    .returning();
  return moved ?? getBatch(db, accountId, id);
}

/**
 * Writes lines' results and counts them, in one statement (the insert a CTE of the counts'
 * update: one round trip, no transaction around it); a line that already has one keeps it (and
 * counts once). Resolves to how many were written.
 */
export async function insertBatchResults(
  db: Db,
  batchId: string,
  results: readonly Omit<typeof batchResults.$inferInsert, "batchId">[],
): Promise<number> {
  if (results.length === 0) return 0;
  const written = db.$with("written").as(
    db
      .insert(batchResults)
      .values(results.map((r) => ({ ...r, batchId })))
      .onConflictDoNothing({ target: [batchResults.batchId, batchResults.line] })
      .returning({ statusCode: batchResults.statusCode }),
  );
  const ok = sql`status_code is not null and status_code < 300`;
  const [row] = await db
    .with(written)
    .update(batches)
    .set({
      completed: sql`${batches.completed} + (select count(*) from ${written} where ${ok})::int`,
      failed: sql`${batches.failed} + (select count(*) from ${written} where not (${ok}))::int`,
    })
    .where(eq(batches.id, batchId))
    .returning({ written: sql<number>`(select count(*) from ${written})::int` });
  return row?.written ?? 0;
}

/** The lines (numbers from 1) that have a result. */
export async function resultLines(db: Db, batchId: string): Promise<Set<number>> {
  const rows = await db.select({ line: batchResults.line }).from(batchResults).where(eq(batchResults.batchId, batchId));
  return new Set(rows.map((r) => r.line));
}

/** A batch's results in line order, `limit` after line `after`. */
export async function resultsPage(db: Db, batchId: string, after: number, limit: number): Promise<BatchResultRow[]> {
  return db
    .select()
    .from(batchResults)
    .where(and(eq(batchResults.batchId, batchId), gt(batchResults.line, after)))
    .orderBy(asc(batchResults.line))
    .limit(limit);
}

/** The batches of the account that have not ended and read `fileId`. */
export async function openBatchesReading(db: Db, accountId: string, fileId: string): Promise<string[]> {
  const rows = await db
    .select({ id: batches.id })
    .from(batches)
    .where(
      and(
        eq(batches.accountId, accountId),
        eq(batches.inputFileId, fileId),
        inArray(batches.status, [...OPEN_BATCH_STATUSES]),
      ),
    );
  return rows.map((r) => r.id);
}

/** Open batches whose runner is gone or none, for the console (and tests). */
export async function unrunBatches(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(batches)
    .where(
      and(
        inArray(batches.status, [...OPEN_BATCH_STATUSES]),
        or(isNull(batches.runner), lt(batches.runnerUntil, sql`now()`)),
      ),
    );
  return row?.n ?? 0;
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: T[] }).rows ?? [])) as T[];
}
