import { count } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { UsageRollup } from "../../src/control/usage-rollup.js";
import { insertUsageRecords } from "../../src/db/queries/usage.js";
import { rolledBefore } from "../../src/db/queries/usage-rollup.js";
import { usageDaily, usageRecords } from "../../src/db/schema/usage.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { createLogger } from "../../src/logger.js";
import { eventually } from "../helpers/eventually.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-20T15:00:00Z");
const logged: string[] = [];
const log = createLogger("info", "test", (line) => logged.push(line));

const record = (requestId: string, daysAgo: number): UsageRecord => ({
  requestId,
  accountId: "alice",
  keyId: "key-1",
  model: "accounts/hearth/models/hearth-tiny",
  baseModelId: "hearth-tiny",
  kind: "chat",
  promptTokens: 10,
  cachedTokens: 0,
  completionTokens: 3,
  images: 0,
  imageSteps: 0,
  imagePixels: 0,
  startedAt: NOW - daysAgo * DAY,
  endedAt: NOW - daysAgo * DAY,
  outcome: "finished",
});

// The API's periodic roll-up: a pass at start and then on its interval, past the retention only,
// and a close that neither waits for the next pass nor throws.
describe.each(testDatabaseBackends)("the usage roll-up's runner on %s", (kind) => {
  const t = useTestDatabase(kind);
  const counts = async () => ({
    records: (await t.db.select({ n: count() }).from(usageRecords))[0]!.n,
    days: (await t.db.select({ n: count() }).from(usageDaily))[0]!.n,
  });

  it("rolls up at start, and again on its interval, the days past the retention", async () => {
    let now = NOW;
    await insertUsageRecords(t.db, [record("old", 10), record("older", 12), record("recent", 1)]);
    const rollup = new UsageRollup(t.db, log, { retentionDays: 7, intervalMs: 50, now: () => now });
    rollup.start();
    try {
      // Every day before the retention's, whole (the records of 7 days ago are kept until theirs is past it).
      await eventually(async () => {
        expect(await counts()).toEqual({ records: 1, days: 2 });
        expect(await rolledBefore(t.db)).toEqual(new Date(Date.parse("2026-11-13T00:00:00Z")));
      }, 10_000);
      now += 7 * DAY;
      await eventually(async () => expect(await counts()).toEqual({ records: 0, days: 3 }), 10_000);
    } finally {
      await rollup.close();
    }
    expect(await rollup.pass()).toBeUndefined();
  });

  it("logs a pass that fails, and the next one goes on", async () => {
    logged.length = 0;
    await insertUsageRecords(t.db, [record("old", 10)]);
    const rollup = new UsageRollup(t.db, log, { retentionDays: 1, now: () => NOW });
    // A database that refuses the roll-up: its table is away.
    await t.db.execute("alter table usage_daily rename to usage_daily_away");
    try {
      expect(await rollup.pass()).toBeUndefined();
    } finally {
      await t.db.execute("alter table usage_daily_away rename to usage_daily");
    }
    expect(logged.filter((l) => l.includes("rolling up usage records failed"))).toHaveLength(1);
    expect(await counts()).toEqual({ records: 1, days: 0 });
    expect(await rollup.pass()).toEqual({ records: 1, days: 1 });
    expect(logged.filter((l) => l.includes("rolled up usage records into daily totals"))).toHaveLength(1);
    await rollup.close();
  });

  it("closes at once between passes, and stops a pass between two days", async () => {
    await insertUsageRecords(
      t.db,
      [1, 2, 3, 4, 5].map((d) => record(`r${d}`, 10 + d)),
    );
    const rollup = new UsageRollup(t.db, log, { retentionDays: 1, now: () => NOW });
    // Closed while the pass's first day is in flight: that day is rolled whole, and no other.
    const pass = rollup.pass();
    await rollup.close(60_000);
    expect(await pass).toEqual({ records: 1, days: 1 });
    expect(await counts()).toEqual({ records: 4, days: 1 });
    expect(await rollup.pass()).toBeUndefined();
  });
});
