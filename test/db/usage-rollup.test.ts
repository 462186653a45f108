import { asc, count } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { insertUsageRecords, usageByGroup, usageRecordsPage, type UsageGrouping } from "../../src/db/queries/usage.js";
import { rolledBefore, rollUpUsage } from "../../src/db/queries/usage-rollup.js";
import { usageDaily, usageRecords } from "../../src/db/schema/usage.js";
import { USAGE_KINDS, type UsageRecord } from "../../src/domain/usage.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const GROUPINGS: UsageGrouping[] = ["model", "key", "day"];

/**
 * 240 records over six days from T0, for two accounts, two keys, an adapter's model (once with
 * another base) and a base model, every kind and outcome; and two at the edges of day 3.
 */
function records(): UsageRecord[] {
  const list = Array.from({ length: 240 }, (_, i): UsageRecord => {
    const adapter = i % 3 === 0;
    const kind = USAGE_KINDS[i % 4]!;
    const promptTokens = (i * 37) % 500;
    const endedAt = T0 + (i % 6) * DAY + ((i * 7) % 24) * HOUR + i * 1000;
    return {
      requestId: `r${i}`,
      accountId: i % 5 === 0 ? "bob" : "alice",
      keyId: `k${i % 2}`,
      model: adapter ? "accounts/alice/models/a" : "accounts/hearth/models/hearth-tiny",
      baseModelId: adapter && i % 50 === 0 ? "other-base" : "hearth-tiny",
      ...(adapter ? { adapter: "artifacts/lora/a.gguf" } : {}),
      kind,
      promptTokens,
      cachedTokens: Math.min(promptTokens, i % 13),
      completionTokens: (i * 11) % 300,
      images: kind === "image" ? 1 + (i % 2) : 0,
      imageSteps: kind === "image" ? 4 : 0,
      imagePixels: kind === "image" ? (1 + (i % 2)) * 512 * 512 : 0,
      startedAt: endedAt - 500,
      endedAt,
      outcome: i % 9 === 0 ? "cancelled" : i % 17 === 0 ? "failed" : "finished",
    };
  });
  const edge = (requestId: string, endedAt: number): UsageRecord => ({
    ...list[1]!,
    requestId,
    endedAt,
    startedAt: endedAt,
  });
  return [...list, edge("last-of-day-2", T0 + 3 * DAY - 1), edge("first-of-day-3", T0 + 3 * DAY)];
}

/** Sums of the records, as a report would have them. */
const total = (list: readonly UsageRecord[]) =>
  list.reduce(
    (t, r) => ({
      requests: t.requests + 1,
      promptTokens: t.promptTokens + r.promptTokens,
      completionTokens: t.completionTokens + r.completionTokens,
      imagePixels: t.imagePixels + r.imagePixels,
    }),
    { requests: 0, promptTokens: 0, completionTokens: 0, imagePixels: 0 },
  );

// The roll-up of old usage records into daily totals on both databases: every report the same
// to the token on either side of it, run once or many times, at once or with writes going on.
describe.each(testDatabaseBackends)("the usage roll-up on %s", (kind) => {
  const t = useTestDatabase(kind);
  /** Every report of both accounts, by each grouping, over periods made of whole UTC days. */
  const reports = async () => {
    const periods = [
      { start: new Date(T0 - DAY), end: new Date(T0 + 10 * DAY) },
      { start: new Date(T0 + DAY), end: new Date(T0 + 3 * DAY) },
      { start: new Date(T0 + 2 * DAY), end: new Date(T0 + 5 * DAY) },
    ];
    const all = [];
    for (const account of ["alice", "bob"])
      for (const range of periods)
        for (const groupBy of GROUPINGS) all.push(await usageByGroup(t.db, account, range, groupBy));
    return all;
  };
  /** An account's totals over all time, from its report by key. */
  const everything = async (account: string) => {
    const groups = await usageByGroup(t.db, account, { start: new Date(0), end: new Date(T0 + 100 * DAY) }, "key");
    return groups.reduce(
      (s, g) => ({
        requests: s.requests + g.requests,
        promptTokens: s.promptTokens + g.promptTokens,
        completionTokens: s.completionTokens + g.completionTokens,
        imagePixels: s.imagePixels + g.imagePixels,
      }),
      { requests: 0, promptTokens: 0, completionTokens: 0, imagePixels: 0 },
    );
  };
  const dailyRows = () => t.db.select().from(usageDaily).orderBy(asc(usageDaily.day), asc(usageDaily.accountId));
  const recordCount = async () => (await t.db.select({ n: count() }).from(usageRecords))[0]!.n;

  it("moves whole days before the cutoff into daily totals, and every report stays the same to the token", async () => {
    const all = records();
    await insertUsageRecords(t.db, all);
    const before = await reports();
    // A cutoff in the middle of day 3 rolls days 0 to 2, whole.
    const rolled = all.filter((r) => r.endedAt < T0 + 3 * DAY);
    expect(await rollUpUsage(t.db, new Date(T0 + 3 * DAY + 15 * HOUR))).toEqual({ records: rolled.length, days: 3 });
    expect(await recordCount()).toBe(all.length - rolled.length);
    expect(await rolledBefore(t.db)).toEqual(new Date(T0 + 3 * DAY));
    expect(await reports()).toEqual(before);
    // The rows are sums by day, account, key, model, base model, adapter and kind.
    const rows = await dailyRows();
    const keys = new Set(
      rolled.map((r) =>
        [
          new Date(r.endedAt).toISOString().slice(0, 10),
          r.accountId,
          r.keyId,
          r.model,
          r.baseModelId,
          r.adapter,
          r.kind,
        ].join(),
      ),
    );
    expect(rows).toHaveLength(keys.size);
    expect(rows.map((r) => r.day).at(-1)).toBe("2026-06-03");
    const sums = rows.reduce(
      (s, r) => ({
        requests: s.requests + r.requests,
        promptTokens: s.promptTokens + r.promptTokens,
        completionTokens: s.completionTokens + r.completionTokens,
        imagePixels: s.imagePixels + r.imagePixels,
      }),
      { requests: 0, promptTokens: 0, completionTokens: 0, imagePixels: 0 },
    );
    expect(sums).toEqual(total(rolled));
    expect(rows.reduce((n, r) => n + r.cancelled, 0)).toBe(rolled.filter((r) => r.outcome === "cancelled").length);
    expect(rows.reduce((n, r) => n + r.failed, 0)).toBe(rolled.filter((r) => r.outcome === "failed").length);
    expect(rows.filter((r) => r.adapter === null).length).toBeGreaterThan(0);
    // The export holds the records not rolled up.
    const page = await usageRecordsPage(
      t.db,
      "alice",
      { start: new Date(0), end: new Date(T0 + 10 * DAY) },
      undefined,
      1_000,
    );
    expect(page[0]!.requestId).toBe("first-of-day-3");
    // Rolling up the rest keeps the totals too.
    expect((await rollUpUsage(t.db, new Date(T0 + 10 * DAY))).days).toBe(3);
    expect(await recordCount()).toBe(0);
    expect(await reports()).toEqual(before);
  });

  it("does nothing the second time, and counts a rolled day by its start in a period that splits it", async () => {
    const all = records();
    await insertUsageRecords(t.db, all);
    const split = { start: new Date(T0 + DAY + 12 * HOUR), end: new Date(T0 + 2 * DAY + 12 * HOUR) };
    const beforeSplit = await usageByGroup(t.db, "alice", split, "day");
    expect(beforeSplit.map((g) => g.group)).toEqual(expect.arrayContaining(["2026-06-02", "2026-06-03"]));
    await rollUpUsage(t.db, new Date(T0 + 3 * DAY));
    const rows = await dailyRows();
    expect(await rollUpUsage(t.db, new Date(T0 + 3 * DAY))).toEqual({ records: 0, days: 0 });
    expect(await rollUpUsage(t.db, new Date(T0 + 2 * DAY))).toEqual({ records: 0, days: 0 });
    expect(await dailyRows()).toEqual(rows);
    expect(await rolledBefore(t.db)).toEqual(new Date(T0 + 3 * DAY));
    // Day 2 (June 2nd) began before the period: none of it counts; day 3 (June 3rd) began in it: all of it.
    const afterSplit = await usageByGroup(t.db, "alice", split, "day");
    expect(afterSplit.map((g) => g.group)).toEqual(expect.arrayContaining(["2026-06-03"]));
    expect(afterSplit.some((g) => g.group === "2026-06-02")).toBe(false);
    const day3 = all.filter((r) => r.accountId === "alice" && r.endedAt >= T0 + 2 * DAY && r.endedAt < T0 + 3 * DAY);
    expect(afterSplit.reduce((n, g) => n + g.completionTokens, 0)).toBe(total(day3).completionTokens);
  });

  it("rolls each day once when several processes roll up at once", async () => {
    const all = records();
    await insertUsageRecords(t.db, all);
    const before = await reports();
    const results = await Promise.all([1, 2, 3].map(() => rollUpUsage(t.db, new Date(T0 + 4 * DAY))));
    expect(results.reduce((n, r) => n + r.records, 0)).toBe(all.filter((r) => r.endedAt < T0 + 4 * DAY).length);
    expect(results.reduce((n, r) => n + r.days, 0)).toBe(4);
    expect(await reports()).toEqual(before);
  });

  it("counts every record written while roll-ups run exactly once, and none that comes after its day", async () => {
    const all = records();
    // Each record twice, by two meters (the second a retry), while roll-ups move day after day.
    const batches = Array.from({ length: 12 }, (_, b) => all.filter((_, i) => i % 12 === b));
    const meter = async (list: UsageRecord[][]) => {
      const outcomes = [];
      for (const batch of list) outcomes.push(await insertUsageRecords(t.db, batch));
      return outcomes;
    };
    const rollUps = async () => {
      for (const days of [1, 2, 3, 4]) await rollUpUsage(t.db, new Date(T0 + days * DAY));
    };
    const [first, retry] = await Promise.all([meter(batches), meter(batches.toReversed()), rollUps()]);
    const written = new Set<string>();
    const late: UsageRecord[] = [];
    for (const outcome of [...first, ...retry]) {
      for (const id of outcome.written) written.add(id);
      late.push(...outcome.late);
    }
    // Each record written once, or dropped as late (a retry may be, after its original was rolled).
    expect(all.every((r) => written.has(r.requestId) || late.includes(r))).toBe(true);
    // What a report counts is what was written, to the token, whichever table it is in now.
    for (const account of ["alice", "bob"]) {
      expect(await everything(account)).toEqual(
        total(all.filter((r) => r.accountId === account && written.has(r.requestId))),
      );
    }
    const boundary = (await rolledBefore(t.db))!.getTime();
    for (const r of late) expect(r.endedAt).toBeLessThan(boundary);
  });

  it("never counts a request again once its day is rolled up: a late record of that day is dropped", async () => {
    const all = records();
    await insertUsageRecords(t.db, all);
    await rollUpUsage(t.db, new Date(T0 + 3 * DAY));
    const [before, rows] = [await everything("alice"), await dailyRows()];
    // A meter's retry of a rolled request, a new request of a rolled day, and one of the next day.
    const again = { ...all[1]!, completionTokens: 299 };
    const unseen = { ...all[1]!, requestId: "new-but-late" };
    const fresh = { ...all[1]!, requestId: "fresh", endedAt: T0 + 3 * DAY, startedAt: T0 + 3 * DAY };
    const { written, late } = await insertUsageRecords(t.db, [again, unseen, fresh]);
    expect([...written]).toEqual(["fresh"]);
    expect(late.map((r) => r.requestId)).toEqual([again.requestId, "new-but-late"]);
    expect(await dailyRows()).toEqual(rows);
    const plusFresh = total([fresh]);
    expect(await everything("alice")).toEqual({
      requests: before.requests + 1,
      promptTokens: before.promptTokens + plusFresh.promptTokens,
      completionTokens: before.completionTokens + plusFresh.completionTokens,
      imagePixels: before.imagePixels + plusFresh.imagePixels,
    });
  });

  it("adds to a day's totals a record that reached the table behind the roll-up's back", async () => {
    const all = records();
    await insertUsageRecords(t.db, all);
    await rollUpUsage(t.db, new Date(T0 + 3 * DAY));
    const rows = await dailyRows();
    const before = await everything("alice");
    // Written without insertUsageRecords (so without its guard), into a day already rolled up.
    const stray = { ...all[1]!, requestId: "stray" };
    await t.db.insert(usageRecords).values({
      ...stray,
      adapter: null,
      startedAt: new Date(stray.startedAt),
      endedAt: new Date(stray.endedAt),
    });
    expect(await rollUpUsage(t.db, new Date(T0 + 3 * DAY))).toEqual({ records: 1, days: 1 });
    expect(await dailyRows()).toHaveLength(rows.length);
    expect(await everything("alice")).toEqual({
      requests: before.requests + 1,
      promptTokens: before.promptTokens + stray.promptTokens,
      completionTokens: before.completionTokens + stray.completionTokens,
      imagePixels: before.imagePixels + stray.imagePixels,
    });
  });

  it("keeps sums past an integer's range", async () => {
    const big = (requestId: string): UsageRecord => ({ ...records()[1]!, requestId, promptTokens: 2_000_000_000 });
    await insertUsageRecords(t.db, [big("b1"), big("b2"), big("b3")]);
    await rollUpUsage(t.db, new Date(T0 + 10 * DAY));
    expect((await everything("alice")).promptTokens).toBe(6_000_000_000);
    expect((await dailyRows())[0]!.promptTokens).toBe(6_000_000_000);
  });
});
