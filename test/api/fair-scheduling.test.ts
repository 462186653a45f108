import { Queue } from "bullmq";
import { Redis } from "ioredis";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { jobs } from "../../src/jobs/jobs.js";
import { BATCH_PRIORITY_OFFSET } from "../../src/requests/queue-lanes.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, type Management } from "../helpers/management.js";

/**
 * Fair scheduling (docs/security.md): each request queues with the number of requests its
 * account already has in flight as its BullMQ priority, so one account's backlog does not
 * hold back another's next request. (The bench's fairness scenario measures the effect on
 * time to first token under a 500-request flood.)
 */
describe("fair scheduling between accounts", () => {
  let hearth: TestHearth;
  let queue: Queue;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ hearth, queue, close } = await oneSequenceHearth(
      { HEARTH_EXPRESS_SEQUENCES: "0", HEARTH_QUEUE_TIMEOUT_MS: "60000" },
      false,
    ));
  });
  afterAll(() => close?.());

  const complete = (who: Management) =>
    who.call("POST", "/v1/completions", { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 8, temperature: 0 });
  const waiting = () => queue.getJobCountByTypes("waiting", "prioritized");

  it("runs another account's request before the backlog of an account that flooded the queue", async () => {
    const flood = await createTestAccount(hearth, "flood");
    const calm = await createTestAccount(hearth, "calm");
    // No worker yet: the flood's six requests wait, then one of the calm account's.
    const finished: string[] = [];
    const floodRuns = Array.from({ length: 6 }, (_, i) => complete(flood).finally(() => finished.push(`flood ${i}`)));
    await eventually(async () => expect(await waiting()).toBe(6));
    const calmRun = complete(calm).finally(() => finished.push("calm"));
    await eventually(async () => expect(await waiting()).toBe(7));
    const priorities = (await queue.getJobs(["prioritized"])).map((j) => j.opts.priority).sort((a, b) => a! - b!);
    expect(priorities).toEqual([1, 1, 2, 3, 4, 5, 6]);

    await hearth.startWorker();
    const replies = await Promise.all([...floodRuns, calmRun]);
    expect(replies.map((r) => r.status)).toEqual(Array(7).fill(200));
    // One job at a time, in priority order: the flood's first, the calm account's, then the rest.
    expect(finished.indexOf("calm")).toBeLessThanOrEqual(1);
  });
});

// The intake gate (limits/intake-gate.ts): one account's requests are taken in a few at a
// time, and each leaves the gate once its job is queued, not when it is answered.
describe("the API's intake gate", () => {
  let hearth: TestHearth;
  let queue: Queue;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ hearth, queue, close } = await oneSequenceHearth(
      { HEARTH_INTAKE_PER_ACCOUNT: "1", HEARTH_EXPRESS_SEQUENCES: "0", HEARTH_QUEUE_TIMEOUT_MS: "60000" },
      false,
    ));
  });
  afterAll(() => close?.());

  it("takes in an account's requests one at a time, each leaving the gate once queued", async () => {
    const flood = await createTestAccount(hearth, "gated");
    const body = { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 8, temperature: 0 };
    // No worker: were the gate held until the answer, the second request would never be queued.
    const runs = Array.from({ length: 6 }, () => flood.call("POST", "/v1/completions", body));
    await eventually(async () => expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(6));
    await hearth.startWorker();
    expect((await Promise.all(runs)).map((r) => r.status)).toEqual(Array(6).fill(200));
  });
});

/**
 * The express lane (docs/security.md): while a model's shared queue has a backlog, an account's
 * lone request goes to the model's express queue, and the worker runs it at once on a sequence
 * it keeps for that, instead of waiting for one of the busy sequences to end.
 */
describe("the express lane", () => {
  let hearth: TestHearth;
  let queue: Queue;
  let close: () => Promise<void>;
  beforeAll(async () => {
    // Room for long generations: the flood's hold the worker's sequence for a while.
    ({ hearth, queue, close } = await oneSequenceHearth({
      HEARTH_EXPRESS_SEQUENCES: "1",
      HEARTH_CONTEXT_SIZE: "2048",
    }));
  });
  afterAll(() => close?.());

  const metric = async (name: string) => {
    const res = await fetch(`${hearth.url}/metrics`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    const line = (await res.text()).split("\n").find((l) => l.startsWith(`${name} `));
    return Number(line?.split(" ").at(-1) ?? 0);
  };

  it("runs an account's lone request at once beside a flood that holds the worker's every other sequence", async () => {
    const flood = await createTestAccount(hearth, "flood");
    const calm = await createTestAccount(hearth, "calm");
    const finished: string[] = [];
    const long = { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 2000, temperature: 0 };
    // The worker's one sequence runs the flood's first request; its second waits in the shared queue.
    const floodRuns = [0, 1].map((i) =>
      flood.call("POST", "/v1/completions", long).finally(() => finished.push(`flood ${i}`)),
    );
    await eventually(async () => {
      expect(await queue.getJobCountByTypes("active")).toBe(1);
      expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(1);
    });
    const reply = await calm.call("POST", "/v1/completions", {
      model: HEARTH_TINY_REF,
      prompt: "Hi",
      max_tokens: 8,
      temperature: 0,
    });
    finished.push("calm");
    expect(reply.status).toBe(200);
    expect(finished).toEqual(["calm"]);
    expect(await metric('hearth_express_requests_total{model="hearth-tiny",outcome="sent"}')).toBe(1);
    expect((await Promise.all(floodRuns)).map((r) => r.status)).toEqual([200, 200]);
  });
});

/**
 * Batches beside interactive requests (docs/security.md, the express lane): a batch's lines
 * queue below every interactive request and never take the express lane, even from an account
 * with nothing else in flight; and while a line holds the worker's only sequence with nothing
 * waiting (the batch keeps one line in flight), another account's request runs at once on the
 * express context instead of waiting for the line to end.
 */
describe("batches and the express lane", () => {
  let hearth: TestHearth;
  let queue: Queue;
  let close: () => Promise<void>;
  let lane: Queue;
  beforeAll(async () => {
    ({ hearth, queue, close } = await oneSequenceHearth(
      {
        HEARTH_EXPRESS_SEQUENCES: "1",
        HEARTH_CONTEXT_SIZE: "2048",
        HEARTH_QUEUE_TIMEOUT_MS: "60000",
        HEARTH_BATCH_CONCURRENCY: "1",
      },
      false,
    ));
    lane = new Queue(jobs.inference.expressQueueName("hearth-tiny"), {
      connection: (await queue.client).duplicate(),
      prefix: hearth.config.redisPrefix,
    });
  });
  afterAll(async () => {
    await lane?.close();
    await close?.();
  });

  const expressed = async () => {
    const res = await fetch(`${hearth.url}/metrics`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    const line = (await res.text())
      .split("\n")
      .find((l) => l.startsWith('hearth_express_requests_total{model="hearth-tiny",outcome="sent"} '));
    return Number(line?.split(" ").at(-1) ?? 0);
  };
  /** A batch of `count` completions of `maxTokens` tokens by `who`; its ID. */
  const batchOf = async (who: Management, count: number, maxTokens: number) => {
    const sdk = new OpenAI({ baseURL: hearth.baseURL, apiKey: who.apiKey, maxRetries: 0 });
    const text = Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        custom_id: `l${i}`,
        method: "POST",
        url: "/v1/completions",
        body: { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: maxTokens, temperature: 0 },
      }),
    ).join("\n");
    const file = await sdk.files.create({ file: await toFile(Buffer.from(text), "in.jsonl"), purpose: "batch" });
    const batch = await sdk.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/completions",
      completion_window: "24h",
    });
    return { id: batch.id, sdk };
  };

  it("queues a batch's lines below interactive requests, never in the express lane", async () => {
    const flood = await createTestAccount(hearth, "flood-b");
    const batcher = await createTestAccount(hearth, "batcher");
    // No worker yet: the flood's two requests wait (a backlog), then the batch's line.
    const body = { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 4, temperature: 0 };
    const floodRuns = [0, 1].map(() => flood.call("POST", "/v1/completions", body));
    await eventually(async () => expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(2));
    const { id, sdk } = await batchOf(batcher, 2, 4);
    await eventually(async () => expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(3), 10_000);
    const priorities = (await queue.getJobs(["prioritized"])).map((j) => j.opts.priority!).sort((a, b) => a - b);
    expect(priorities).toEqual([1, 2, BATCH_PRIORITY_OFFSET + 1]);
    expect(await lane.getJobCountByTypes("waiting", "prioritized", "active")).toBe(0);
    expect(await expressed()).toBe(0);

    const worker = await hearth.startWorker();
    expect((await Promise.all(floodRuns)).map((r) => r.status)).toEqual([200, 200]);
    await eventually(async () => expect((await sdk.batches.retrieve(id)).status).toBe("completed"), 30_000);
    expect(await expressed()).toBe(0);
    await worker.close(1_000);
  }, 60_000);

  it("runs another account's request at once while a batch's line holds the only sequence", async () => {
    const batcher = await createTestAccount(hearth, "long-batcher");
    const calm = await createTestAccount(hearth, "calm-b");
    await hearth.startWorker();
    const { id, sdk } = await batchOf(batcher, 2, 2000);
    // The line runs on the worker's one sequence; the batch keeps no other in flight: nothing waits.
    await eventually(async () => {
      expect(await queue.getJobCountByTypes("active")).toBe(1);
      expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(0);
    }, 10_000);
    const reply = await calm.call("POST", "/v1/completions", {
      model: HEARTH_TINY_REF,
      prompt: "Hi",
      max_tokens: 8,
      temperature: 0,
    });
    expect(reply.status).toBe(200);
    // Answered while the batch's first line still runs: through the express lane.
    expect((await sdk.batches.retrieve(id)).request_counts).toMatchObject({ completed: 0, failed: 0 });
    expect(await expressed()).toBe(1);
    await sdk.batches.cancel(id);
    await eventually(async () => expect((await sdk.batches.retrieve(id)).status).toBe("cancelled"), 30_000);
  }, 60_000);
});

/** A Hearth whose worker runs one request at a time (one job, one sequence), and its model's shared queue. */
async function oneSequenceHearth(env: Record<string, string>, worker = true) {
  const hearth = await startTestHearth({
    worker,
    env: { HEARTH_WORKER_CONCURRENCY: "1", HEARTH_SEQUENCES_PER_CONTEXT: "1", ...env },
  });
  const redis = new Redis(hearth.config.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(jobs.inference.queueName("hearth-tiny"), {
    connection: redis,
    prefix: hearth.config.redisPrefix,
  });
  const close = async () => {
    await queue.close();
    redis.disconnect();
    await hearth.close();
  };
  return { hearth, queue, close };
}
