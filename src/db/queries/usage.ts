import type { Db } from "../client.js";
import { usageRecords } from "../schema/usage.js";
import type { UsageRecord } from "../../domain/usage.js";

/**
 * Writes usage records in one statement; a request whose record is already there keeps it
 * (the first written counts: docs/usage.md). Resolves to the records newly written.
 */
export async function insertUsageRecords(db: Db, records: readonly UsageRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const rows = records.map((r) => ({
    ...r,
    adapter: r.adapter ?? null,
    startedAt: new Date(r.startedAt),
    endedAt: new Date(r.endedAt),
  }));
  const written = await db
    .insert(usageRecords)
    .values(rows)
    .onConflictDoNothing({ target: usageRecords.requestId })
    .returning({ requestId: usageRecords.requestId });
  return written.length;
}
