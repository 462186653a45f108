import { Queue } from "bullmq";
import { Redis } from "ioredis";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imageBlobs } from "../../src/jobs/image-job.js";
import { jobs, type ImagePayload } from "../../src/jobs/jobs.js";
import { decodeMessages, publishCancel, type WireMessage } from "../../src/requests/stream.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

/** A worker with the image role only, fed image jobs straight on its queue. */
describe("a worker with the image role", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let queue: Queue;
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_WORKER_ROLES: "image" } });
    redis = new Redis(hearth.config.redisUrl);
    queue = new Queue(jobs.image.queueName("hearth-sketch"), { connection: redis, prefix: hearth.config.redisPrefix });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await hearth?.close();
  });

  /** Adds a job and collects its events until `done` or `error`; `during` runs on the first progress. */
  async function run(payload: Omit<ImagePayload, "replyTo">, during?: () => Promise<void>): Promise<WireMessage[]> {
    const subscriber = new Redis(hearth.config.redisUrl);
    const replyTo = `${hearth.config.redisPrefix}:reply:${payload.requestId}`;
    const messages: WireMessage[] = [];
    const ended = new Promise<void>((resolve) =>
      subscriber.on("message", (_c, m: string) => {
        // A message holds one event, or several of one turn (event-batcher.ts).
        for (const message of decodeMessages(m)) {
          messages.push(message);
          if (message.type === "progress" && message.step === 1) void during?.();
          if (message.type === "done" || message.type === "error") resolve();
        }
      }),
    );
    await subscriber.subscribe(replyTo);
    try {
      await queue.add("image", { ...payload, replyTo } satisfies ImagePayload);
      await ended;
      return messages;
    } finally {
      subscriber.disconnect();
    }
  }

  const model = { name: "accounts/hearth/models/hearth-sketch", baseModelId: "hearth-sketch" };
  const params = { prompt: "a red circle", width: 64, height: 64, cfgScale: 7, steps: 6, seed: 9, samples: 2 };

  it("announces its role and image models, and serves no text model", async () => {
    const [worker] = await liveWorkers(redis, hearth.config.redisPrefix);
    expect(worker).toMatchObject({ roles: ["image"], models: [], imageModels: [{ id: "hearth-sketch" }] });
  });

  it("streams progress step by step, then names its images, which are PNGs waiting in Redis", async () => {
    const messages = await run({ requestId: "img-1", model, params });
    const progress = messages.filter((m) => m.type === "progress");
    expect(progress.map((m) => (m.type === "progress" ? [m.step, m.steps] : []))).toEqual(
      Array.from({ length: 12 }, (_, i) => [i + 1, 12]),
    );
    const done = messages.at(-1)!;
    expect(done.type).toBe("done");
    const images = done.type === "done" ? done.images! : [];
    expect(images.map((i) => i.seed)).toEqual([9, 10]);
    for (const image of images) {
      const png = await imageBlobs.take(redis, image.blob);
      expect(await sharp(png!).metadata()).toMatchObject({ format: "png", width: 64, height: 64 });
      expect(await imageBlobs.take(redis, image.blob)).toBeNull(); // taken once
    }
  });

  it("takes the uploaded image of an image-to-image job, and fails cleanly when it has expired", async () => {
    const init = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#00aa00" } })
      .png()
      .toBuffer();
    const blob = imageBlobs.key(hearth.config.redisPrefix, "img-2", "init");
    await imageBlobs.put(redis, blob, init);
    const ok = await run({ requestId: "img-2", model, params: { ...params, samples: 1 }, init: { blob, strength: 0 } });
    expect(ok.at(-1)?.type).toBe("done");
    expect(await redis.exists(blob)).toBe(0);
    const gone = await run({ requestId: "img-3", model, params, init: { blob, strength: 0.5 } });
    expect(gone.at(-1)).toMatchObject({ type: "error", error: { code: "unavailable" } });
  });

  it("stops between steps when the request is cancelled", async () => {
    const messages = await run(
      { requestId: "img-4", model, params: { ...params, steps: 150, samples: 4, width: 512, height: 512 } },
      () => publishCancel(redis, hearth.config.redisPrefix, "img-4"),
    );
    expect(messages.at(-1)).toMatchObject({ type: "error", error: { code: "unavailable", message: /cancelled/ } });
    expect(messages.filter((m) => m.type === "progress").length).toBeLessThan(600);
  });
});
