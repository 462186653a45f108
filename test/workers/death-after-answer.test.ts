import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { spawnApi } from "../helpers/api-process.js";
import { eventually } from "../helpers/eventually.js";
import { startFreezableProxy, type FreezableProxy } from "../helpers/freezable-proxy.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { recordOf } from "../helpers/usage.js";
import { spawnWorker } from "../helpers/worker-process.js";

/**
 * A worker that dies after its answer reached the API but before it appended the request's
 * usage record (streamed-job.ts appends once its last event is out): a real worker process,
 * whose every Redis connection goes through a proxy that lets its `done` through and nothing
 * after it, then SIGKILLed. The client has its whole answer, and the record is the one the API
 * process that relayed the answer appended as the done came, before it passed the answer on
 * (docs/usage.md, "Who writes the record"). So it holds when that API process is SIGKILLed
 * too, the moment its client has the answer. The batch chaos test found both: a worker killed
 * every 3 s left now and then an answered line unmetered, and once, with the batch's API
 * process killed within a lease of that worker, a line whose API had been watching for the
 * worker's record when it died.
 */
describe("a worker that dies between its answer and its usage record", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let proxy: FreezableProxy;
  let dataDir: string;
  let worker: HearthChild;
  const spawned: HearthChild[] = [];

  /** A worker whose Redis connections go through the proxy, once it serves. */
  const startWorker = async () => {
    worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "text", REDIS_URL: proxy.url });
    spawned.push(worker);
    await eventually(async () => {
      if (!worker.running) throw worker.failure("starting");
      expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.pid)).toContain(worker.pid);
    }, 90_000);
  };

  beforeAll(async () => {
    // PostgreSQL: the last test's second API process shares the database.
    hearth = await startTestHearth({ backend: "postgres", worker: false });
    redis = new Redis(hearth.config.redisUrl);
    proxy = await startFreezableProxy(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-death-after-answer-"));
    await startWorker();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(spawned.map((child) => child.stop()));
    await proxy?.close();
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const complete = async (url = hearth.url) => {
    const response = await fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt: "The ", max_tokens: 8 }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    return { requestId: response.headers.get("x-request-id")!, usage: body.usage };
  };

  /** The answer's record is there, once: finished, with the counts its client was sent. */
  const expectMetered = async (answer: Awaited<ReturnType<typeof complete>>, timeoutMs?: number) =>
    expect(await recordOf(hearth, answer.requestId, timeoutMs)).toMatchObject({
      outcome: "finished",
      promptTokens: answer.usage.prompt_tokens,
      completionTokens: answer.usage.completion_tokens,
    });

  it("meters a request as usual: once, though the API and the worker both append it", async () => {
    await expectMetered(await complete());
  });

  it("meters the answer once its worker is gone", async () => {
    proxy.freezeAfter('"type":"done"');
    const answer = await complete();
    process.kill(worker.pid, "SIGKILL");
    await expectMetered(answer, 20_000);
  }, 60_000);

  it("meters the answer when the API process that relayed it dies with the worker", async () => {
    proxy.thaw();
    await startWorker();
    const api = await spawnApi(hearth, dataDir);
    spawned.push(api.child);
    proxy.freezeAfter('"type":"done"');
    const answer = await complete(api.url);
    process.kill(api.child.pid, "SIGKILL");
    process.kill(worker.pid, "SIGKILL");
    // The test's own API meters it: at once, or once a meter's read the dead API left pending is claimed (30 s).
    await expectMetered(answer, 45_000);
  }, 150_000);
});
