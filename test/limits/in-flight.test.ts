import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { InFlightRequests } from "../../src/limits/in-flight.js";
import { spawnApi } from "../helpers/api-process.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, defaultAccount } from "../helpers/management.js";
import { deleteRedisKeys } from "../helpers/redis.js";
import { readSse, type SseEvent } from "../helpers/sse.js";

const STALE_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// An account's requests in flight (docs/security.md): each API process confirms its own, so a
// long request keeps counting and those of a process that died stop counting within the bound.
describe("requests in flight, shared by API processes", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  let redis: RedisClient;
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  const processes: InFlightRequests[] = [];
  const apiProcess = () => {
    const inFlight = new InFlightRequests(redis, prefix, { staleMs: STALE_MS, timeoutMs: 5_000 });
    processes.push(inFlight);
    return inFlight;
  };
  beforeAll(async () => {
    redis = createRedis({ redisUrl }, "producer");
    await waitForRedis(redis, 10_000);
  });
  afterAll(async () => {
    for (const p of processes) p.close();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
    redis.disconnect();
  });

  it("counts a request for as long as its process lives, however long it runs", async () => {
    const a = apiProcess();
    const b = apiProcess();
    expect(await a.admit("long", "r1", 2)).toEqual({ admitted: true, before: 0 });
    await sleep(STALE_MS * 2.5);
    expect(await b.admit("long", "r2", 2)).toEqual({ admitted: true, before: 1 });
    expect(await b.admit("long", "r3", 2)).toEqual({ admitted: false, before: 2 });
    await a.release("long", "r1");
    expect(await b.admit("long", "r3", 2)).toEqual({ admitted: true, before: 1 });
  });

  it("stops counting the requests of a process that stopped confirming them (it died) within the bound", async () => {
    const dead = apiProcess();
    const live = apiProcess();
    await dead.admit("orphaned", "d1", 4);
    await dead.admit("orphaned", "d2", 4);
    await live.admit("orphaned", "l1", 4);
    dead.close(); // what SIGKILL does to its timer; nothing is released
    expect(await live.admit("orphaned", "l2", 4)).toEqual({ admitted: true, before: 3 });
    expect(await live.admit("orphaned", "l3", 4)).toEqual({ admitted: false, before: 4 });
    await sleep(STALE_MS + 200);
    // d1 and d2 are gone; l1 and l2 were confirmed meanwhile.
    expect(await live.admit("orphaned", "l3", 4)).toEqual({ admitted: true, before: 2 });
  });

  it("never brings back a request released between two confirmations", async () => {
    const a = apiProcess();
    await a.admit("released", "x1", 5);
    await a.admit("released", "x2", 5);
    await a.release("released", "x1");
    await sleep(STALE_MS); // two confirmations at least
    expect(await redis.zrange(`${prefix}:in-flight:released`, 0, -1)).toEqual(["x2"]);
    expect(await a.count("released")).toBe(1);
  });
});

describe("an API process killed with requests in flight", () => {
  let hearth: TestHearth;
  let dataDir: string;
  let child: HearthChild | undefined;
  const staleMs = 3_000;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-in-flight-"));
    hearth = await startTestHearth({
      backend: "postgres",
      env: { HEARTH_IN_FLIGHT_STALE_MS: String(staleMs), HEARTH_CONTEXT_SIZE: "2048" },
    });
  }, 120_000);
  afterAll(async () => {
    await child?.stop(5_000);
    await hearth?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("frees its account's slots within HEARTH_IN_FLIGHT_STALE_MS: another API process admits the account again", async () => {
    const account = await createTestAccount(hearth, "killed-api");
    const patched = await defaultAccount(hearth).call("PATCH", "/v1/admin/accounts/killed-api", {
      limits: { maxInFlightRequests: 2 },
    });
    expect(patched.status).toBe(200);
    const api = await spawnApi(hearth, dataDir, { HEARTH_IN_FLIGHT_STALE_MS: String(staleMs) });
    child = api.child;
    const body = { model: "accounts/hearth/models/hearth-tiny", prompt: "Long ", max_tokens: 2000, stream: true };
    const send = (url: string) =>
      fetch(`${url}/v1/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const streams = [await send(api.url), await send(api.url)];
    const events: SseEvent[][] = [[], []];
    const reads = streams.map((s, i) => readSse(s, { events: events[i] }));
    await eventually(async () => expect(Math.min(...events.map((e) => e.length))).toBeGreaterThan(1));

    process.kill(api.child.pid, "SIGKILL");
    const killedAt = Date.now();
    await Promise.all(reads);
    // Nothing released the two: the account is at its cap on every API process...
    const refused = await send(hearth.url);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toMatch(/has 2 requests queued or running/);
    // ...until they go stale, not confirmed by the dead process.
    const admitted = await eventually(async () => {
      const reply = await send(hearth.url);
      if (reply.status !== 200) throw new Error(`still ${reply.status}: ${await reply.text()}`);
      return reply;
    }, staleMs + 5_000);
    const freedAfter = Date.now() - killedAt;
    console.log(`the killed API process's requests stopped counting ${freedAfter} ms after the kill`);
    expect(freedAfter).toBeLessThan(staleMs + 2_000);
    expect((await readSse(admitted)).ended).toBe(true);
  }, 120_000);
});
