import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { eventually } from "../helpers/eventually.js";
import { spawnWorker } from "../helpers/worker-process.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

/**
 * SIGTERM on a worker process mid-stream: the stream finishes when it fits in
 * HEARTH_WORKER_DRAIN_MS, and otherwise ends with an honest error.
 */
describe("a worker told to stop (SIGTERM)", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-worker-drain-"));
  });
  afterAll(async () => {
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function startWorker(drainMs: number): Promise<HearthChild> {
    const worker = spawnWorker(hearth, dataDir, {
      HEARTH_WORKER_ROLES: "text",
      HEARTH_WORKER_DRAIN_MS: String(drainMs),
    });
    await eventually(async () => {
      if (!worker.running) throw worker.failure("starting");
      expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.pid)).toContain(worker.pid);
    }, 60_000);
    return worker;
  }

  /** A stream stopped (SIGTERM to its worker) after its first token; the whole SSE text. */
  async function streamThroughStop(worker: HearthChild, maxTokens: number): Promise<string> {
    const res = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "accounts/hearth/models/hearth-tiny",
        prompt: "The ",
        max_tokens: maxTokens,
        stream: true,
      }),
    });
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const stopped = worker.stop(60_000);
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += new TextDecoder().decode(part.value);
    await stopped;
    return text;
  }

  it("lets a stream that fits in the drain time finish", async () => {
    const text = await streamThroughStop(await startWorker(30_000), 300);
    expect(text).toMatch(/"finish_reason":"length"/);
    expect(text).not.toMatch(/"error"/);
  }, 90_000);

  it("ends a stream longer than the drain time with an error, not as complete", async () => {
    const text = await streamThroughStop(await startWorker(50), 400);
    expect(text).toMatch(/"error":\{[^}]*"code":"unavailable"/);
    expect(text).not.toMatch(/"finish_reason":"(stop|length)"/);
  }, 90_000);
});
