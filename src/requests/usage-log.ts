import type { RedisClient } from "../redis/connection.js";
import { usageRecordSchema, type UsageRecord } from "../domain/usage.js";

/**
 * The usage log: a Redis Stream where the worker that ran a request appends its usage record
 * as the request ends, and from which the meter of the API processes writes them to the
 * database in batches (control/usage-meter.ts, docs/usage.md). The stream holds a record until
 * a meter has written it, through any API process's restart.
 */
export const usageLogKey = (prefix: string) => `${prefix}:usage:{log}`;

/** The field each entry keeps its record in, as JSON. */
const FIELD = "r";

export async function appendUsage(redis: RedisClient, prefix: string, record: UsageRecord): Promise<void> {
  await redis.xadd(usageLogKey(prefix), "*", FIELD, JSON.stringify(record));
}

/** An entry's record, or undefined for one that is not a record (written by something else: dropped). */
export function readUsageEntry(fields: readonly string[]): UsageRecord | undefined {
  const at = fields.indexOf(FIELD);
  if (at === -1 || at % 2 !== 0) return undefined;
  try {
    const parsed = usageRecordSchema.safeParse(JSON.parse(fields[at + 1]!));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
