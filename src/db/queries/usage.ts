import { and, asc, eq, getTableColumns, gt, gte, lt, or, sql, type AnyColumn } from "drizzle-orm";
import type { Db } from "../client.js";
import { deploymentEvents, usageRecords, type UsageRow } from "../schema/usage.js";
import type { UsageRecord } from "../../domain/usage.js";

/** The records' columns, as the schema declares them: the insert names them from there. */
type UsageInsert = typeof usageRecords.$inferInsert;
const columns = Object.entries(getTableColumns(usageRecords)) as [keyof UsageInsert, AnyColumn][];
const columnNames = sql.raw(columns.map(([, c]) => c.name).join(", "));
const columnTypes = sql.raw(columns.map(([, c]) => `${c.name} ${c.getSQLType()}`).join(", "));

/**
 * Writes usage records in one statement; a request whose record is already there keeps it
 * (the first written counts: docs/usage.md). Resolves to the request IDs newly written. The rows
 * travel as one JSON parameter that the database unpacks (json_to_recordset): drizzle's builder
 * with sixteen parameters a row cost several times more per record (docs/performance.md, "Metering").
 */
export async function insertUsageRecords(db: Db, records: readonly UsageRecord[]): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  // Keyed by column name; JSON writes the times as ISO text.
  const rows = records.map(rowOf).map((row) => Object.fromEntries(columns.map(([field, c]) => [c.name, row[field]])));
  const written = await db.execute(sql`
    insert into ${usageRecords} (${columnNames})
    select ${columnNames} from json_to_recordset(${JSON.stringify(rows)}::json) as r(${columnTypes})
    on conflict (request_id) do nothing
    returning request_id`);
  return new Set(rowsOf<{ request_id: string }>(written).map((r) => r.request_id));
}

/** A record as its row: every column given (a new column fails the type check until it is). */
function rowOf(r: UsageRecord): Required<UsageInsert> {
  return { ...r, adapter: r.adapter ?? null, startedAt: new Date(r.startedAt), endedAt: new Date(r.endedAt) };
}

/** What usage is summed by: the model asked for, the API key, or the day (UTC) it ended. */
export type UsageGrouping = "model" | "key" | "day";

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
  /** The model's name, the key's ID, or the day as YYYY-MM-DD. */
  group: string;
  /** The model the sums are of, and its base model (what prices are by). */
  model: string;
  baseModelId: string;
}

/**
 * An account's usage of the requests that ended in [start, end), summed by `groupBy` and model
 * (so that each sum has one price), in the group's order (model name, key ID, day), then the
 * model's.
 */
export async function usageByGroup(
  db: Db,
  accountId: string,
  range: { start: Date; end: Date },
  groupBy: UsageGrouping,
): Promise<UsageGroup[]> {
  const u = usageRecords;
  const group =
    groupBy === "model"
      ? sql<string>`${u.model}`
      : groupBy === "key"
        ? sql<string>`${u.keyId}`
        : sql<string>`to_char(${u.endedAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const sum = (column: AnyColumn) => sql<string>`coalesce(sum(${column}), 0)`;
  const rows = await db
    .select({
      group,
      model: u.model,
      baseModelId: u.baseModelId,
      requests: sql<string>`count(*)`,
      promptTokens: sum(u.promptTokens),
      cachedTokens: sum(u.cachedTokens),
      completionTokens: sum(u.completionTokens),
      images: sum(u.images),
      imageSteps: sum(u.imageSteps),
      imagePixels: sum(u.imagePixels),
    })
    .from(u)
    .where(and(eq(u.accountId, accountId), gte(u.endedAt, range.start), lt(u.endedAt, range.end)))
    .groupBy(group, u.model, u.baseModelId)
    .orderBy(group, u.model, u.baseModelId);
  // Sums come back as text (bigint and numeric): counts fit in a double exactly up to 2^53.
  return rows.map((r) => ({
    group: r.group,
    model: r.model,
    baseModelId: r.baseModelId,
    requests: Number(r.requests),
    promptTokens: Number(r.promptTokens),
    cachedTokens: Number(r.cachedTokens),
    completionTokens: Number(r.completionTokens),
    images: Number(r.images),
    imageSteps: Number(r.imageSteps),
    imagePixels: Number(r.imagePixels),
  }));
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
  return rowsOf<{ model_id: string; seconds: string }>(rows).map((r) => ({
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

/** The rows of a raw statement's result: postgres-js gives them as the result, PGlite under `rows`. */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
