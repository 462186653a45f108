import crypto from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { asc } from "drizzle-orm";
import { UsageMeter, type UsageMeterOptions } from "../../src/control/usage-meter.js";
import { rollUpUsage } from "../../src/db/queries/usage-rollup.js";
import { usageRecords } from "../../src/db/schema/usage.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { createLogger } from "../../src/logger.js";
import { appendUsage, usageLogKey } from "../../src/requests/usage-log.js";
import { eventually } from "../helpers/eventually.js";
import { deleteRedisKeys } from "../helpers/redis.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** What the meter logs, for the tests that check it says what it dropped. */
const logged: string[] = [];
const log = createLogger("warn", "test", (line) => logged.push(line));

const record = (requestId: string, completionTokens = 5): UsageRecord => ({
  requestId,
  accountId: "alice",
  keyId: "key-1",
  model: "accounts/hearth/models/hearth-tiny",
  baseModelId: "hearth-tiny",
  kind: "completion",
  promptTokens: 12,
  cachedTokens: 4,
  completionTokens,
  images: 0,
  imageSteps: 0,
  imagePixels: 0,
  startedAt: 1_790_000_000_000,
  endedAt: 1_790_000_000_250,
  outcome: "finished",
});

// The meter against real Redis and both databases: each request's record is written once,
// whatever reads it twice, and a meter that dies between its read and its write loses nothing.
describe.each(testDatabaseBackends)("the usage meter on %s", (kind) => {
  const t = useTestDatabase(kind);
  let prefix: string;
  const prefixes: string[] = [];
  const redis = new Redis(redisUrl);
  const meters: UsageMeter[] = [];
  const start = (consumer: string, claimIdleMs = 30_000, more: Partial<UsageMeterOptions> = {}) => {
    const meter = new UsageMeter(new Redis(redisUrl), t.db, log, {
      prefix,
      consumer,
      blockMs: 100,
      claimIdleMs,
      gatherMs: 100,
      ...more,
    });
    meters.push(meter);
    return meter;
  };
  const rows = () => t.db.select().from(usageRecords).orderBy(asc(usageRecords.requestId));

  beforeEach(async () => {
    for (const meter of meters.splice(0)) await meter.close();
    prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
    prefixes.push(prefix);
  });
  afterAll(async () => {
    for (const meter of meters) await meter.close();
    // This suite's own logs only: test files running beside it (here or in another checkout) use the same Redis.
    for (const p of prefixes) await deleteRedisKeys(redisUrl, `${p}:*`);
    redis.disconnect();
  });

  it("writes each record, as appended, and empties the log", async () => {
    start("a");
    await appendUsage(redis, prefix, record("r1"));
    await appendUsage(redis, prefix, { ...record("r2", 7), adapter: "artifacts/lora/x.gguf", outcome: "cancelled" });
    await eventually(async () => expect(await rows()).toHaveLength(2), 5_000);
    const [r1, r2] = await rows();
    expect(r1).toMatchObject({
      requestId: "r1",
      promptTokens: 12,
      cachedTokens: 4,
      completionTokens: 5,
      adapter: null,
    });
    expect(r1!.endedAt.getTime() - r1!.startedAt.getTime()).toBe(250);
    expect(r2).toMatchObject({ completionTokens: 7, adapter: "artifacts/lora/x.gguf", outcome: "cancelled" });
    await eventually(async () => expect(await redis.xlen(usageLogKey(prefix))).toBe(0), 5_000);
  });

  it("writes a lone record at once, then lets those that follow gather into one write", async () => {
    const writes: string[][] = [];
    start("a", 30_000, { gatherMs: 3_000, onWritten: (records) => writes.push(records.map((r) => r.requestId)) });
    await appendUsage(redis, prefix, record("r0"));
    await eventually(async () => expect(writes).toEqual([["r0"]]), 5_000);
    // Appended one by one, over a small part of the time the meter lets them gather.
    for (let i = 1; i <= 5; i++) {
      await appendUsage(redis, prefix, record(`r${i}`));
      await new Promise((r) => setTimeout(r, 20));
    }
    await eventually(async () => expect(writes).toHaveLength(2), 10_000);
    expect(writes[1]).toEqual(["r1", "r2", "r3", "r4", "r5"]);
    expect(await rows()).toHaveLength(6);
  });

  it("counts a request once: a second record of it, in the same batch or later, adds nothing", async () => {
    await appendUsage(redis, prefix, record("r1", 5));
    await appendUsage(redis, prefix, record("r1", 9));
    start("a"); // reads both in one batch: records appended before any meter ran count too
    await eventually(async () => expect(await rows()).toHaveLength(1), 5_000);
    await appendUsage(redis, prefix, record("r1", 11));
    await appendUsage(redis, prefix, record("r2"));
    await eventually(async () => expect((await rows()).map((r) => r.requestId)).toEqual(["r1", "r2"]), 5_000);
    expect((await rows())[0]!.completionTokens).toBe(5);
  });

  it("reads a request's second entry in a batch by its ID alone, not parsing its record", async () => {
    // As a text answer's API process and worker append it: the same request twice, one read.
    await appendUsage(redis, prefix, record("r1", 5));
    // A second entry naming r1 whose record would be dropped as not one, were it parsed.
    await redis.xadd(usageLogKey(prefix), "*", "id", "r1", "r", "{not a record");
    logged.length = 0;
    start("a");
    await eventually(async () => expect(await redis.xlen(usageLogKey(prefix))).toBe(0), 5_000);
    expect((await rows()).map((r) => [r.requestId, r.completionTokens])).toEqual([["r1", 5]]);
    expect(logged.filter((l) => l.includes("not a usage record"))).toEqual([]);
  });

  it("takes over what a meter read and never wrote, once it has been idle long enough", async () => {
    // A meter that read two records and died before writing them: they are pending, its own.
    const key = usageLogKey(prefix);
    await redis.xgroup("CREATE", key, "meter", "0", "MKSTREAM");
    await appendUsage(redis, prefix, record("r1"));
    await appendUsage(redis, prefix, record("r2"));
    const read = (await redis.xreadgroup("GROUP", "meter", "dead", "COUNT", 10, "STREAMS", key, ">")) as unknown[];
    expect(read).toHaveLength(1);
    start("b", 300);
    await eventually(async () => expect((await rows()).map((r) => r.requestId)).toEqual(["r1", "r2"]), 5_000);
    const pending = (await redis.xpending(key, "meter")) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
  });

  it("goes on after Redis lost the log and its group (a restart without persistence)", async () => {
    start("a", 200);
    await appendUsage(redis, prefix, record("r1"));
    await eventually(async () => expect(await rows()).toHaveLength(1), 5_000);
    await redis.del(usageLogKey(prefix));
    await appendUsage(redis, prefix, record("r2"));
    await eventually(async () => expect((await rows()).map((r) => r.requestId)).toEqual(["r1", "r2"]), 10_000);
  });

  it("drops what is not a record, or a record the database refuses, without holding the others back", async () => {
    logged.length = 0;
    await redis.xadd(usageLogKey(prefix), "*", "x", "not a record");
    await appendUsage(redis, prefix, { ...record("cached"), cachedTokens: 99 }); // more cached than prompt tokens
    // A record the log's schema takes and the database does not: a count past its integer column.
    await appendUsage(redis, prefix, { ...record("huge"), completionTokens: 2 ** 40 });
    await appendUsage(redis, prefix, record("r1"));
    start("a", 200);
    await eventually(async () => expect((await rows()).map((r) => r.requestId)).toEqual(["r1"]), 5_000);
    await eventually(async () => expect(await redis.xlen(usageLogKey(prefix))).toBe(0), 5_000);
    expect(logged.filter((l) => l.includes("not a usage record"))).toHaveLength(2);
    expect(logged.filter((l) => l.includes("the database refuses") && l.includes('"huge"'))).toHaveLength(1);
  });

  it("drops, and says so, a record of a day already rolled up into daily totals", async () => {
    logged.length = 0;
    start("a");
    await appendUsage(redis, prefix, record("r1"));
    await eventually(async () => expect(await rows()).toHaveLength(1), 5_000);
    await rollUpUsage(t.db, new Date(record("r1").endedAt + 86_400_000));
    // A retry of r1 (written, then rolled up), and a request of the same day never seen.
    await appendUsage(redis, prefix, record("r1", 9));
    await appendUsage(redis, prefix, record("r2"));
    await appendUsage(redis, prefix, { ...record("r3"), endedAt: record("r3").endedAt + 86_400_000 });
    await eventually(async () => expect((await rows()).map((r) => r.requestId)).toEqual(["r3"]), 5_000);
    await eventually(async () => expect(await redis.xlen(usageLogKey(prefix))).toBe(0), 5_000);
    const dropped = logged.filter((l) => l.includes("a day already rolled up"));
    expect(dropped).toHaveLength(2);
    expect(dropped.join()).toContain('"r1"');
    expect(dropped.join()).toContain('"r2"');
  });
});
