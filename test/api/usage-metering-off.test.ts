import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { usageRecords } from "../../src/db/schema/usage.js";
import { leaseKey } from "../../src/requests/stream.js";
import { usageLogKey } from "../../src/requests/usage-log.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

const TINY = "accounts/hearth/models/hearth-tiny";

// HEARTH_USAGE_METERING=false (docs/usage.md, "Turning it off") is the API processes' setting:
// an API with it off tags no job with whom to meter and runs no meter, so requests through it
// to a real worker leave nothing in the usage log and no record in the database; a job an API
// with it on tagged is recorded whatever its worker's own setting. A job ends by releasing its
// lease, after the moment it would have appended its record: the checks wait for that, not for
// a time.
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

  it("makes no usage log and no record: the API tags no job and runs no meter", async () => {
    // Its worker's own setting on: it appends only what a job's tag asks.
    hearth = await startTestHearth({ worker: false, env: { HEARTH_USAGE_METERING: "false" } });
    await hearth.startWorker({ HEARTH_USAGE_METERING: "true" });
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

  it("records a job its API tagged, whatever its worker's own setting", async () => {
    hearth = await startTestHearth({ worker: false });
    await hearth.startWorker({ HEARTH_USAGE_METERING: "false" });
    const redis = new Redis(hearth.config.redisUrl);
    try {
      const requestId = await complete(hearth, redis);
      await eventually(async () => {
        const rows = await hearth!.api.database.db.select().from(usageRecords);
        expect(rows.map((r) => [r.requestId, r.outcome])).toEqual([[requestId, "finished"]]);
      }, 10_000);
      // Two appends, the one record: the API's as the answer came, and the worker's as it ended.
      expect(await entriesAdded(redis, hearth.config.redisPrefix)).toBe(2);
    } finally {
      redis.disconnect();
    }
  });
});
