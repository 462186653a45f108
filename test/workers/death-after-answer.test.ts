import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { leaseKey, meteredKey } from "../../src/requests/stream.js";
import { eventually } from "../helpers/eventually.js";
import { startFreezableProxy, type FreezableProxy } from "../helpers/freezable-proxy.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { recordOf } from "../helpers/usage.js";
import { spawnWorker } from "../helpers/worker-process.js";

/**
 * A worker that dies after its answer reached the API but before it appended the request's
 * usage record (streamed-job.ts appends once its last event is out): a real worker process,
 * whose every Redis connection goes through a proxy that lets its `done` through and nothing
 * after it, then SIGKILLed. The client has its whole answer; the API process that relayed it
 * sees the worker's lease lapse without the worker's mark and appends the finished record
 * itself (docs/usage.md, "Cut short"). Found by the batch chaos test, where a worker killed
 * every 3 s left now and then an answered line unmetered.
 */
describe("a worker that dies between its answer and its usage record", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let proxy: FreezableProxy;
  let dataDir: string;
  let worker: HearthChild;

  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
    redis = new Redis(hearth.config.redisUrl);
    proxy = await startFreezableProxy(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-death-after-answer-"));
    worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "text", REDIS_URL: proxy.url });
    await eventually(async () => {
      if (!worker.running) throw worker.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(1);
    }, 90_000);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const complete = async () => {
    const response = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt: "The ", max_tokens: 8 }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    return { requestId: response.headers.get("x-request-id")!, usage: body.usage };
  };

  it("meters a request as usual, the worker's mark telling the API it did", async () => {
    const { requestId, usage } = await complete();
    expect(await recordOf(hearth, requestId)).toMatchObject({
      outcome: "finished",
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
    });
    // Set as the worker releases the lease, just after its append (which the meter may write first).
    await eventually(async () => expect(await redis.exists(meteredKey(hearth.config.redisPrefix, requestId))).toBe(1));
  });

  it("meters the answer once its worker is gone: the API appends the finished record", async () => {
    proxy.freezeAfter('"type":"done"');
    const { requestId, usage } = await complete();
    process.kill(worker.pid, "SIGKILL");
    expect(await recordOf(hearth, requestId, 20_000)).toMatchObject({
      outcome: "finished",
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
    });
    const prefix = hearth.config.redisPrefix;
    expect(await redis.exists(leaseKey(prefix, requestId), meteredKey(prefix, requestId))).toBe(0);
  }, 60_000);
});
