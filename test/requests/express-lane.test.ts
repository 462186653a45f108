import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferenceClient, InferenceRequest } from "../../src/requests/inference-client.js";
import { jobs, type InferencePayload } from "../../src/jobs/jobs.js";
import { BATCH_PRIORITY_OFFSET } from "../../src/requests/queue-lanes.js";
import { sendEvent } from "../../src/requests/stream.js";
import { type ProducerRig, startProducerRig, tokensOf } from "../helpers/producer-rig.js";

const BASE = "hearth-tiny";

/**
 * Fair scheduling's express lane at the producer (docs/security.md), against real Redis and
 * BullMQ: a base model's request whose account has nothing else in flight (priority 1) goes to
 * the express queue only while the shared queue has a backlog, and moves to the shared queue
 * when no worker takes it within the bound; and while a batch's lines run from the shared queue
 * with nothing waiting in the lane. (test/api/fair-scheduling.test.ts and
 * test/api/batch-scheduling.test.ts run it through a real worker.)
 */
describe("InferenceClient's express lane", () => {
  let rig: ProducerRig;
  let client: InferenceClient;
  const expressed: string[] = [];
  const moved: string[] = [];
  const request: InferenceRequest = {
    kind: "completion",
    model: { name: "accounts/hearth/models/hearth-tiny", baseModelId: BASE },
    prompts: ["Hi"],
    n: 1,
    sampling: { maxTokens: 4, temperature: 0, stop: [] },
  };
  /** A stand-in worker that answers who it is, and whether the job came marked express. */
  const serve = (queueName: string, who: string) =>
    rig.serve(queueName, (p) => `${who}${p.kind !== "embedding" && p.express ? "+express" : ""}`);
  const run = (priority: number) => tokensOf(client.run(request, new AbortController().signal, { priority }));

  beforeAll(async () => {
    rig = await startProducerRig();
    client = rig.client(
      { lanes: { express: { waitMs: 200 } } },
      { expressed: (base) => expressed.push(base), expressMoved: (base) => moved.push(base) },
    );
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("sends a lone request to the express lane only while the shared queue has a backlog", async () => {
    // No backlog: a lone request goes to the shared queue like any other.
    const shared = await serve(jobs.inference.queueName(BASE), "shared");
    expect(await run(1)).toBe("shared");
    expect(expressed).toEqual([]);
    await shared.close();

    // A backlog (the shared queue's worker is gone): an account's second request waits in it,
    // a lone one goes to the express lane and is served there, marked express.
    const express = await serve(jobs.inference.expressQueueName(BASE), "express");
    const backlogged = run(2);
    const sharedQueue = new Queue(jobs.inference.queueName(BASE), { connection: rig.raw, prefix: rig.prefix });
    await expect.poll(() => sharedQueue.getJobCountByTypes("waiting", "prioritized")).toBe(1);
    expect(await run(1)).toBe("express+express");
    expect(expressed).toEqual([BASE]);

    // The lane's worker gone too: a lone request moves to the shared queue after the bound,
    // still marked express, and is served there with the backlog.
    await express.close();
    const lone = run(1);
    await expect.poll(() => moved, { timeout: 5_000 }).toEqual([BASE]);
    expect(await sharedQueue.getJobCountByTypes("waiting", "prioritized")).toBe(2);
    const sharedAgain = await serve(jobs.inference.queueName(BASE), "shared");
    expect(await lone).toBe("shared+express");
    expect(await backlogged).toBe("shared");
    expect(expressed).toEqual([BASE, BASE]);
    await sharedAgain.close();
    await sharedQueue.close();
  });

  it("sends a lone request to the express lane while a batch's line runs, with nothing waiting in the lane", async () => {
    // The shared queue's worker holds each job it takes until the test lets it go.
    const held: (() => void)[] = [];
    const holder = new Worker(
      jobs.inference.queueName(BASE),
      async (job) => {
        await new Promise<void>((resolve) => held.push(resolve));
        const p = job.data as InferencePayload;
        const to = { prefix: rig.prefix, requestId: p.requestId, replyTo: p.replyTo, logTtlMs: 0 };
        await sendEvent(rig.raw, to, 1, { type: "token", index: 0, text: "shared" });
        await sendEvent(rig.raw, to, 2, {
          type: "done",
          choices: [{ index: 0, finishReason: "length" }],
          usage: { promptTokens: 1, completionTokens: 1 },
        });
      },
      { connection: rig.raw.duplicate(), prefix: rig.prefix },
    );
    await holder.waitUntilReady();
    const sharedQueue = new Queue(jobs.inference.queueName(BASE), { connection: rig.raw, prefix: rig.prefix });
    const holding = async (n: number) => {
      await expect.poll(() => held.length).toBe(n);
      expect(await sharedQueue.getJobCountByTypes("waiting", "prioritized")).toBe(0);
    };
    expressed.length = 0;
    moved.length = 0;
    try {
      // A batch's line holds the shared queue's worker, nothing waits: a lone request goes to the lane.
      const line = run(BATCH_PRIORITY_OFFSET + 1);
      await holding(1);
      const lane = new Queue(jobs.inference.expressQueueName(BASE), { connection: rig.raw, prefix: rig.prefix });
      const first = run(1);
      await expect.poll(() => lane.getJobCountByTypes("waiting", "prioritized")).toBe(1);
      expect(expressed).toEqual([BASE]);
      // The lane has a request waiting already: the next lone request goes to the shared queue.
      const second = run(1);
      await expect.poll(() => sharedQueue.getJobCountByTypes("waiting", "prioritized")).toBe(1);
      expect(expressed).toEqual([BASE]);
      const express = await serve(jobs.inference.expressQueueName(BASE), "express");
      expect(await first).toBe("express+express");
      held.shift()!();
      expect(await line).toBe("shared");
      await expect.poll(() => held.length).toBe(1);
      held.shift()!();
      expect(await second).toBe("shared");

      // An interactive request holds it instead: a lone request waits in the shared queue as before.
      const busy = run(2);
      await holding(1);
      const lone = run(1);
      await expect.poll(() => sharedQueue.getJobCountByTypes("waiting", "prioritized")).toBe(1);
      expect(expressed).toEqual([BASE]);
      held.shift()!();
      expect(await busy).toBe("shared");
      await expect.poll(() => held.length).toBe(1);
      held.shift()!();
      expect(await lone).toBe("shared");
      await express.close();
      await lane.close();
    } finally {
      for (const release of held) release();
      await holder.close();
      await sharedQueue.close();
    }
  });
});
