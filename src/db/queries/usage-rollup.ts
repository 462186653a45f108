import { sql } from "drizzle-orm";
import { lockForTransaction } from "../advisory-locks.js";
import type { Db } from "../client.js";
import { resultRows } from "../result-rows.js";
import { usageDaily, usageRecords, usageRollup } from "../schema/usage.js";

const DAY_MS = 86_400_000;

/** The UTC midnight at or before `at`. */
function utcDayStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** Before when the records are rolled up (usage_daily holds their sums); null before the first roll-up. */
export async function rolledBefore(db: Db): Promise<Date | null> {
  const [row] = await db.select({ at: usageRollup.rolledBefore }).from(usageRollup);
  return row?.at ?? null;
}

export interface RollUpResult {
  /** Records moved into usage_daily (and deleted). */
  records: number;
  /** The UTC days they ended on, one transaction each. */
  days: number;
}

/**
 * Moves the usage records that ended before the UTC midnight at or before `olderThan` into
 * usage_daily, summed by day, account, key, model, base model, adapter and kind, oldest day
 * first, one transaction per day (so that a long backlog makes progress within the statement
 * timeout). Each transaction deletes a whole day's records and adds their sums in one statement,
 * so the two tables together count each request once at every moment; then it moves
 * `usage_rollup.rolled_before` past the day. It holds the usageRollup lock exclusively, and every
 * write of records holds it shared and writes none that ended before `rolled_before`
 * (insertUsageRecords): a record written again after its day was rolled (a meter's retry) is
 * not counted twice. Idempotent, and safe to run from several processes at once: they take turns
 * by the lock, and a day's records are rolled by whichever comes first. `signal` stops it
 * between two days.
 */
export async function rollUpUsage(db: Db, olderThan: Date, signal?: AbortSignal): Promise<RollUpResult> {
  const cutoff = utcDayStart(olderThan);
  const result: RollUpResult = { records: 0, days: 0 };
  while (!signal?.aborted) {
    const rolled = await db.transaction((tx) => rollUpOldestDay(tx, cutoff));
    if (rolled === undefined) break;
    result.records += rolled;
    result.days++;
  }
  return result;
}

/** Rolls up the oldest day of records before `cutoff`: how many records; undefined when none was left. */
async function rollUpOldestDay(tx: Db, cutoff: Date): Promise<number | undefined> {
  await lockForTransaction(tx, "usageRollup");
  const r = usageRecords;
  // The oldest record's day, as days since 1970-01-01 (UTC).
  const [oldest] = await tx
    .select({ day: sql<string | number | null>`floor(extract(epoch from min(${r.endedAt})) / 86400)` })
    .from(r)
    .where(sql`${r.endedAt} < ${cutoff.toISOString()}::timestamptz`);
  if (oldest?.day === null || oldest?.day === undefined) {
    await advance(tx, cutoff);
    return undefined;
  }
  const dayEnd = new Date(Math.min(cutoff.getTime(), (Number(oldest.day) + 1) * DAY_MS));
  const d = usageDaily;
  const result = await tx.execute(sql`
    with rolled as (
      delete from ${r} where ${r.endedAt} < ${dayEnd.toISOString()}::timestamptz returning *
    ), added as (
      insert into ${d} as d (day, account_id, key_id, model, base_model_id, adapter, kind, requests, cancelled,
        failed, prompt_tokens, cached_tokens, completion_tokens, images, image_steps, image_pixels)
      select (ended_at at time zone 'UTC')::date, account_id, key_id, model, base_model_id, adapter, kind, count(*),
        count(*) filter (where outcome = 'cancelled'), count(*) filter (where outcome = 'failed'),
        sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), sum(images), sum(image_steps),
        sum(image_pixels)
      from rolled
      group by 1, account_id, key_id, model, base_model_id, adapter, kind
      on conflict on constraint usage_daily_key do update set
        requests = d.requests + excluded.requests,
        cancelled = d.cancelled + excluded.cancelled,
        failed = d.failed + excluded.failed,
        prompt_tokens = d.prompt_tokens + excluded.prompt_tokens,
        cached_tokens = d.cached_tokens + excluded.cached_tokens,
        completion_tokens = d.completion_tokens + excluded.completion_tokens,
        images = d.images + excluded.images,
        image_steps = d.image_steps + excluded.image_steps,
        image_pixels = d.image_pixels + excluded.image_pixels
    )
    select count(*) as records from rolled`);
  await advance(tx, dayEnd);
  return Number(resultRows<{ records: string }>(result)[0]?.records ?? 0);
}

/** Moves rolled_before to `to`, never back. */
async function advance(tx: Db, to: Date) {
  await tx
    .insert(usageRollup)
    .values({ single: true, rolledBefore: to })
    .onConflictDoUpdate({
      target: usageRollup.single,
      set: { rolledBefore: sql`greatest(${usageRollup.rolledBefore}, excluded.rolled_before)` },
    });
}
