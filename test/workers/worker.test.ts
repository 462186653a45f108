import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs } from "../../src/queues/jobs.js";
import { liveWorkers } from "../../src/queues/worker-registry.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

describe("the worker", () => {
  let hearth: TestHearth;
  let redis: Redis;
  beforeAll(async () => {
    hearth = await startTestHearth();
    redis = new Redis(hearth.config.redisUrl);
  });
  afterAll(async () => {
    redis?.disconnect();
    await hearth?.close();
  });

  it("announces itself with the models it serves", async () => {
    const workers = await liveWorkers(redis, hearth.config.redisPrefix);
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ id: hearth.worker!.id, models: ["hearth-tiny"], pid: process.pid });
  });

  it("ends a malformed job with an error event instead of leaving its caller waiting", async () => {
    const subscriber = new Redis(hearth.config.redisUrl);
    const replyTo = `${hearth.config.redisPrefix}:reply:malformed-test`;
    const received = new Promise<unknown>((resolve) => subscriber.on("message", (_c, m) => resolve(JSON.parse(m))));
    await subscriber.subscribe(replyTo);
    const queue = new Queue(jobs.inference.queueName("hearth-tiny"), { connection: redis, prefix: hearth.config.redisPrefix });
    try {
      await queue.add("inference", { requestId: "r-1", replyTo, kind: "nonsense" });
      expect(await received).toMatchObject({ id: "r-1", type: "error", error: { code: "internal" } });
    } finally {
      await queue.close();
      subscriber.disconnect();
    }
  });

  it("retires from the registry when it closes", async () => {
    const extra = await hearth.startWorker();
    expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.id)).toContain(extra.id);
    await extra.close();
    expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.id)).not.toContain(extra.id);
  });
});
