import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { usageRecords } from "../../src/db/schema/usage.js";
import { leaseKey, meteredKey } from "../../src/requests/stream.js";
import { usageLogKey } from "../../src/requests/usage-log.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

const TINY = "accounts/hearth/models/hearth-tiny";

// HEARTH_USAGE_METERING=false (docs/usage.md): requests through the API to a real worker leave
// nothing in the usage log and no record in the database. A job ends by releasing its lease,
// after the moment it would have appended its record: the checks wait for that, not for a time.
describe("usage metering turned off", () => {
  let hearth: TestHearth | undefined;
  afterEach(async () => {
    await hearth?.close();
    hearth = undefined;
  });

  /** Sends a completion and waits until its worker has ended the job; returns its request ID. */
  const complete = async (h: TestHearth, redis: Redis) => {
    const res = await fetch(`${h.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: TINY, prompt: "The hearth keeps ", max_tokens: 6, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: { completion_tokens: number } };
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    const requestId = res.headers.get("x-request-id")!;
    await eventually(async () => expect(await redis.exists(leaseKey(h.config.redisPrefix, requestId))).toBe(0));
    return requestId;
  };

  /** Entries ever added to the usage log, those a meter has written and deleted included. */
  const entriesAdded = async (redis: Redis, prefix: string) => {
    if ((await redis.exists(usageLogKey(prefix))) === 0) return 0;
    const info = (await redis.xinfo("STREAM", usageLogKey(prefix))) as (string | number)[];
    return Number(info[info.indexOf("entries-added") + 1]);
  };

  it("makes no usage log and no record: the worker appends nothing and the API runs no meter", async () => {
    hearth = await startTestHearth({ env: { HEARTH_USAGE_METERING: "false" } });
    const redis = new Redis(hearth.config.redisUrl);
    try {
      await complete(hearth, redis);
      await complete(hearth, redis);
      // No meter made the log's group (it would with MKSTREAM), and no worker appended to it.
      expect(await redis.exists(usageLogKey(hearth.config.redisPrefix))).toBe(0);
      expect(await hearth.api.database.db.select().from(usageRecords)).toHaveLength(0);
    } finally {
      redis.disconnect();
    }
  });

  it("a worker with metering off appends nothing, even for a job its API tagged to meter", async () => {
    hearth = await startTestHearth({ worker: false });
    const unmetered = await hearth.startWorker({ HEARTH_USAGE_METERING: "false" });
    const redis = new Redis(hearth.config.redisUrl);
    try {
      const offId = await complete(hearth, redis);
      // Its mark says the record is settled, so the API that tagged the job does not append one in its place.
      expect(await redis.exists(meteredKey(hearth.config.redisPrefix, offId))).toBe(1);
      expect(await entriesAdded(redis, hearth.config.redisPrefix)).toBe(0);
      expect(await hearth.api.database.db.select().from(usageRecords)).toHaveLength(0);
      // The same API with a worker that meters in its place: its request is recorded (the checks above can fail).
      await unmetered.close(1_000);
      await hearth.startWorker();
      const requestId = await complete(hearth, redis);
      await eventually(async () => {
        const rows = await hearth!.api.database.db.select().from(usageRecords);
        expect(rows.map((r) => r.requestId)).toEqual([requestId]);
      }, 10_000);
      expect(await entriesAdded(redis, hearth.config.redisPrefix)).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});
