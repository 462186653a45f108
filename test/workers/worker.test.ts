import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs, type InferencePayload } from "../../src/jobs/jobs.js";
import { decodeMessages, type WireMessage } from "../../src/requests/stream.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { greedyText } from "../helpers/oracle.js";

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
    // Which adapters it has warm, the prefixes of the last long prompts it ran, the sequences it has
    // free and the jobs it takes at once from its own queue, for placement (none here yet).
    const { worker } = hearth.config;
    expect(workers[0]!.serving).toEqual([
      {
        model: "hearth-tiny",
        adapters: 0,
        adapterKeys: [],
        prefixKeys: [],
        requests: 0,
        freeSequences: {
          base: worker.contextsPerModel * worker.sequencesPerContext,
          adapters: worker.adapterContexts * worker.adapterSequences,
        },
        slots: worker.concurrency,
      },
    ]);
  });

  it("ends a malformed job with an error event instead of leaving its caller waiting", async () => {
    const subscriber = new Redis(hearth.config.redisUrl);
    const replyTo = `${hearth.config.redisPrefix}:reply:malformed-test`;
    const received = new Promise<unknown>((resolve) => subscriber.on("message", (_c, m) => resolve(JSON.parse(m))));
    await subscriber.subscribe(replyTo);
    const queue = new Queue(jobs.inference.queueName("hearth-tiny"), {
      connection: redis,
      prefix: hearth.config.redisPrefix,
    });
    try {
      await queue.add("inference", { requestId: "r-1", replyTo, kind: "nonsense" });
      expect(await received).toMatchObject({ id: "r-1", type: "error", error: { code: "internal" } });
    } finally {
      await queue.close();
      subscriber.disconnect();
    }
  });

  it("publishes a request's tokens in order, the text per choice intact, done last", async () => {
    const subscriber = new Redis(hearth.config.redisUrl);
    const replyTo = `${hearth.config.redisPrefix}:reply:coalesce-test`;
    const messages: WireMessage[] = [];
    const ended = new Promise<void>((resolve) =>
      subscriber.on("message", (_c, m: string) => {
        // A message holds one event, or several of one turn (event-batcher.ts).
        messages.push(...decodeMessages(m));
        if (messages.at(-1)?.type !== "token") resolve();
      }),
    );
    await subscriber.subscribe(replyTo);
    const queue = new Queue(jobs.inference.queueName("hearth-tiny"), {
      connection: redis,
      prefix: hearth.config.redisPrefix,
    });
    const prompts = ["One ", "Two "];
    try {
      await queue.add("inference", {
        requestId: "r-2",
        replyTo,
        kind: "completion",
        model: { name: "accounts/hearth/models/hearth-tiny", baseModelId: "hearth-tiny" },
        prompts,
        n: 2,
        sampling: { maxTokens: 40, temperature: 0, stop: [] },
      } satisfies InferencePayload);
      await ended;
    } finally {
      await queue.close();
      subscriber.disconnect();
    }
    const done = messages.at(-1)!;
    expect(done).toMatchObject({ id: "r-2", type: "done", usage: { completionTokens: 160 } });
    const tokens = messages.slice(0, -1);
    expect(tokens.every((m) => m.id === "r-2" && m.type === "token")).toBe(true);
    // However the tokens were grouped into events, each choice's text is whole and in order.
    const texts = [0, 1, 2, 3].map((index) =>
      tokens.map((m) => (m.type === "token" && m.index === index ? m.text : "")).join(""),
    );
    expect(texts).toEqual([0, 0, 1, 1].map((p) => greedyText(prompts[p]!, 40)));
    expect(tokens.length).toBeLessThanOrEqual(160);
  });

  it("retires from the registry when it closes", async () => {
    const extra = await hearth.startWorker();
    expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.id)).toContain(extra.id);
    await extra.close();
    expect((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.id)).not.toContain(extra.id);
  });
});
