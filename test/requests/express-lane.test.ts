import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferenceClient, InferenceRequest } from "../../src/requests/inference-client.js";
import { jobs } from "../../src/jobs/jobs.js";
import { type ProducerRig, startProducerRig, tokensOf } from "../helpers/producer-rig.js";

const BASE = "hearth-tiny";

/**
 * Fair scheduling's express lane at the producer (docs/security.md), against real Redis and
 * BullMQ: a base model's request whose account has nothing else in flight (priority 1) goes to
 * the express queue only while the shared queue has a backlog, and moves to the shared queue
 * when no worker takes it within the bound. (test/api/fair-scheduling.test.ts runs it through
 * a real worker.)
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
    await serve(jobs.inference.queueName(BASE), "shared");
    expect(await lone).toBe("shared+express");
    expect(await backlogged).toBe("shared");
    expect(expressed).toEqual([BASE, BASE]);
    await sharedQueue.close();
  });
});
