import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { eventually } from "../helpers/eventually.js";
import { spawnWorker } from "../helpers/worker-process.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

/**
 * The scale-out shape for images: an API on PostgreSQL and, in a process of its own, a
 * worker with only the image role (no llama.cpp loaded). Images are served; text requests,
 * which no worker takes, fail within the queue timeout.
 */
describe("a worker process with only the image role", () => {
  let hearth: TestHearth;
  let worker: HearthChild;
  let redis: Redis;
  let dataDir: string;

  beforeAll(async () => {
    hearth = await startTestHearth({ backend: "postgres", worker: false, env: { HEARTH_QUEUE_TIMEOUT_MS: "1000" } });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-image-worker-"));
    worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "image" });
    await eventually(async () => {
      if (!worker.running) throw worker.failure("starting");
      const workers = await liveWorkers(redis, hearth.config.redisPrefix);
      expect(workers.map((w) => w.roles)).toEqual([["image"]]);
    }, 60_000);
  }, 90_000);
  afterAll(async () => {
    await worker?.stop();
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, accept = "application/json") =>
    fetch(`${hearth.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json", accept },
      body: JSON.stringify(body),
    });

  it("serves images, and leaves text requests to the text workers there are not", async () => {
    const res = await post(
      "/v1/image_generation/accounts/hearth/models/hearth-sketch",
      {
        prompt: "three stars at night",
        width: 96,
        height: 96,
        steps: 5,
        seed: 11,
      },
      "image/png",
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("seed")).toBe("11");
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({ format: "png", width: 96 });
    const text = await post("/v1/completions", {
      model: "accounts/hearth/models/hearth-tiny",
      prompt: "Hi",
      max_tokens: 2,
    });
    expect(text.status).toBe(503);
    const [info] = await liveWorkers(redis, hearth.config.redisPrefix);
    expect(info).toMatchObject({ models: [], imageModels: [{ id: "hearth-sketch" }], pid: worker.pid });
  });
});
