import { and, asc, eq, getTableColumns, gt, gte, lt, or, sql, type AnyColumn, type SQLWrapper } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import { lockForTransaction } from "../advisory-locks.js";
import type { Db } from "../client.js";
import { resultRows } from "../result-rows.js";
import { deploymentEvents, usageDaily, usageRecords, type UsageRow } from "../schema/usage.js";
import type { UsageRecord } from "../../domain/usage.js";
import { rolledBefore } from "./usage-rollup.js";

/** The records' columns, as the schema declares them: the insert names them from there. */
type UsageInsert = typeof usageRecords.$inferInsert;
const columns = Object.entries(getTableColumns(usageRecords)) as [keyof UsageInsert, AnyColumn][];
const columnNames = sql.raw(columns.map(([, c]) => c.name).join(", "));
const columnTypes = sql.raw(columns.map(([, c]) => `${c.name} ${c.getSQLType()}`).join(", "));

/**
 * Writes usage records in one statement; a request whose record is already there keeps it
 * (the first written counts: docs/usage.md). A record that ended before the roll-up's
 * `rolled_before` is not written, and comes back in `late`: its day is summed in usage_daily
 * already, and its request may be among them (usage-rollup.ts). Resolves to the request IDs
 * newly written. The rows travel as one JSON parameter that the database unpacks
 * (json_to_recordset): drizzle's builder with sixteen parameters a row cost several times more
 * per record (docs/performance.md, "Metering").
 */
export async function insertUsageRecords(
  db: Db,
  records: readonly UsageRecord[],
): Promise<{ written: Set<string>; late: UsageRecord[] }> {
  if (records.length === 0) return { written: new Set(), late: [] };
  return db.transaction(async (tx) => {
    // Shared with other writes; a roll-up waits for them, and they for it.
    await lockForTransaction(tx, "usageRollup", "shared");
    const before = (await rolledBefore(tx))?.getTime() ?? Number.NEGATIVE_INFINITY;
    const late = records.filter((r) => r.endedAt < before);
    // Keyed by column name; JSON writes the times as ISO text.
    const rows = records
      .filter((r) => r.endedAt >= before)
      .map(rowOf)
      .map((row) => Object.fromEntries(columns.map(([field, c]) => [c.name, row[field]])));
    if (rows.length === 0) return { written: new Set<string>(), late };
    const written = await tx.execute(sql`
      insert into ${usageRecords} (${columnNames})
      select ${columnNames} from json_to_recordset(${JSON.stringify(rows)}::json) as r(${columnTypes})
      on conflict (request_id) do nothing
      returning request_id`);
    return { written: new Set(resultRows<{ request_id: string }>(written).map((r) => r.request_id)), late };
  });
}

/** A record as its row: every column given (a new column fails the type check until it is). */
function rowOf(r: UsageRecord): Required<UsageInsert> {
  return {
    ...r,
    adapter: r.adapter ?? null,
    batchId: r.batchId ?? null,
    startedAt: new Date(r.startedAt),
    endedAt: new Date(r.endedAt),
  };
}

/**
 * What usage is summed by: the model asked for, the API key, the day (UTC) it ended, or the
 * day and the model (the account page's chart).
 */
export type UsageGrouping = "model" | "key" | "day" | "day_model";

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  images: number;
  imageSteps: number;
  imagePixels: number;
}

export interface UsageGroup extends UsageTotals {
  /** The model's name, the key's ID, or the day as YYYY-MM-DD (by day, and by day and model). */
  group: string;
  /** The model the sums are of, and its base model (what prices are by). */
  model: string;
  baseModelId: string;
}

/**
 * An account's usage in [start, end), from its records and its rolled-up days (usage-rollup.ts)
 * together, one row per record or day with the time it counts at: a record's end, a rolled day's
 * start (UTC midnight), so that a rolled day counts whole in the period its start is in.
 */
export function usageInPeriod(db: Db, accountId: string | undefined, range: { start: Date; end: Date }) {
  const [r, d] = [usageRecords, usageDaily];
  const records = db
    .select({
      at: sql<Date>`${r.endedAt}`.as("at"),
      accountId: r.accountId,
      keyId: r.keyId,
      model: r.model,
      baseModelId: r.baseModelId,
      requests: sql<number>`1::bigint`.as("requests"),
      promptTokens: r.promptTokens,
      cachedTokens: r.cachedTokens,
      completionTokens: r.completionTokens,
      images: r.images,
      imageSteps: r.imageSteps,
      imagePixels: r.imagePixels,
    })
    .from(r)
    .where(
      and(accountId ? eq(r.accountId, accountId) : undefined, gte(r.endedAt, range.start), lt(r.endedAt, range.end)),
    );
  const days = db
    .select({
      at: sql<Date>`(${d.day}::timestamp at time zone 'UTC')`.as("at"),
      accountId: d.accountId,
      keyId: d.keyId,
      model: d.model,
      baseModelId: d.baseModelId,
      requests: d.requests,
      promptTokens: d.promptTokens,
      cachedTokens: d.cachedTokens,
      completionTokens: d.completionTokens,
      images: d.images,
      imageSteps: d.imageSteps,
      imagePixels: d.imagePixels,
    })
    .from(d)
    .where(
      and(
        accountId ? eq(d.accountId, accountId) : undefined,
        gte(d.day, firstDayFrom(range.start)),
        lt(d.day, firstDayFrom(range.end)),
      ),
    );
  return unionAll(records, days).as("usage");
}

/** The first UTC day, as YYYY-MM-DD, whose midnight is at or after `at`. */
function firstDayFrom(at: Date): string {
  const day = 86_400_000;
  return new Date(Math.ceil(at.getTime() / day) * day).toISOString().slice(0, 10);
}

/**
 * An account's usage in [start, end) (usageInPeriod), summed by `groupBy` and model (so that
 * each sum has one price), in the group's order (model name, key ID, day), then the model's.
 * Since every sum is by model too, `day_model` is the day's grouping: each row is a day and a
 * model (and its base model).
 */
export async function usageByGroup(
  db: Db,
  accountId: string,
  range: { start: Date; end: Date },
  groupBy: UsageGrouping,
): Promise<UsageGroup[]> {
  const u = usageInPeriod(db, accountId, range);
  const group =
    groupBy === "model"
      ? sql<string>`${u.model}`
      : groupBy === "key"
        ? sql<string>`${u.keyId}`
        : // "day" and "day_model"
          sql<string>`to_char(${u.at} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await db
    .select({ group, model: u.model, baseModelId: u.baseModelId, ...sums(u) })
    .from(u)
    .groupBy(group, u.model, u.baseModelId)
    .orderBy(group, u.model, u.baseModelId);
  return rows.map((r) => ({ group: r.group, model: r.model, baseModelId: r.baseModelId, ...totalsOf(r) }));
}

/** Every account's usage in [start, end) (usageInPeriod), one sum per account that used any. */
export async function usageByAccount(
  db: Db,
  range: { start: Date; end: Date },
): Promise<(UsageTotals & { accountId: string })[]> {
  const u = usageInPeriod(db, undefined, range);
  const rows = await db
    .select({ accountId: u.accountId, ...sums(u) })
    .from(u)
    .groupBy(u.accountId)
    .orderBy(u.accountId);
  return rows.map((r) => ({ accountId: r.accountId, ...totalsOf(r) }));
}

/** The sums of usageInPeriod's rows, each summed column by its name in UsageTotals. */
function sums(u: ReturnType<typeof usageInPeriod>) {
  const sum = (column: SQLWrapper) => sql<string>`coalesce(sum(${column}), 0)`;
  return {
    requests: sum(u.requests),
    promptTokens: sum(u.promptTokens),
    cachedTokens: sum(u.cachedTokens),
    completionTokens: sum(u.completionTokens),
    images: sum(u.images),
    imageSteps: sum(u.imageSteps),
    imagePixels: sum(u.imagePixels),
  };
}

/** Sums come back as text (bigint and numeric): counts fit in a double exactly up to 2^53. */
function totalsOf(r: Record<keyof UsageTotals, string>): UsageTotals {
  return {
    requests: Number(r.requests),
    promptTokens: Number(r.promptTokens),
    cachedTokens: Number(r.cachedTokens),
    completionTokens: Number(r.completionTokens),
    images: Number(r.images),
    imageSteps: Number(r.imageSteps),
    imagePixels: Number(r.imagePixels),
  };
}

/**
 * The hours each of an account's models was DEPLOYED within [start, end) (by its deployment
 * events; a model deployed now counts until `now`), for the models deployed at some time in it.
 */
export async function deployedHours(
  db: Db,
  accountId: string,
  range: { start: Date; end: Date },
  now: Date,
): Promise<{ modelId: string; hours: number }[]> {
  const until = new Date(Math.min(range.end.getTime(), now.getTime()));
  if (until <= range.start) return [];
  const [from, to] = [sql`${range.start.toISOString()}::timestamptz`, sql`${until.toISOString()}::timestamptz`];
  const rows = await db.execute(sql`
    with spans as (
      select model_id, event, at,
        lead(at) over (partition by model_id order by at, id) as next_at
      from ${deploymentEvents}
      where account_id = ${accountId}
    )
    select model_id,
      sum(extract(epoch from (least(coalesce(next_at, ${to}), ${to}) - greatest(at, ${from})))) as seconds
    from spans
    where event = 'deployed' and at < ${to} and coalesce(next_at, ${to}) > ${from}
    group by model_id
    order by model_id`);
  return resultRows<{ model_id: string; seconds: string }>(rows).map((r) => ({
    modelId: r.model_id,
    hours: Number(r.seconds) / 3600,
  }));
}

/**
 * One page of an account's usage records that ended in [start, end), in the order (ended_at,
 * request_id), after `after` (the last of the previous page): an export reads them page by page
 * with bounded memory, whatever their number.
 */
export async function usageRecordsPage(
  db: Db,
  accountId: string,
  range: { start: Date; end: Date },
  after: { endedAt: Date; requestId: string } | undefined,
  limit: number,
): Promise<UsageRow[]> {
  const u = usageRecords;
  return db
    .select()
    .from(u)
    .where(
      and(
        eq(u.accountId, accountId),
        gte(u.endedAt, range.start),
        lt(u.endedAt, range.end),
        after === undefined
          ? undefined
          : or(gt(u.endedAt, after.endedAt), and(eq(u.endedAt, after.endedAt), gt(u.requestId, after.requestId))),
      ),
    )
    .orderBy(asc(u.endedAt), asc(u.requestId))
    .limit(limit);
}
