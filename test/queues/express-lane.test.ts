import crypto from "node:crypto";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, waitForRedis, type RedisClient } from "../../src/queues/connection.js";
import { InferenceClient, type InferenceObserver, type InferenceRequest } from "../../src/queues/inference-client.js";
import { jobs, type InferencePayload } from "../../src/queues/jobs.js";
import { ProducerQueues } from "../../src/queues/producer-queues.js";
import { ReplyHub } from "../../src/queues/reply-hub.js";
import { sendEvent } from "../../src/queues/stream.js";
import { deleteRedisKeys } from "../helpers/redis.js";

const BASE = "hearth-tiny";

/**
 * Fair scheduling's express lane at the producer (docs/security.md), against real Redis and
 * BullMQ: a base model's request whose account has nothing else in flight (priority 1) goes to
 * the express queue only while the shared queue has a backlog, and moves to the shared queue
 * when no worker takes it within the bound. (test/api/fair-scheduling.test.ts runs it through
 * a real worker.)
 */
describe("InferenceClient's express lane", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let producer: RedisClient;
  let subscriber: RedisClient;
  let raw: Redis;
  let hub: ReplyHub;
  let queues: ProducerQueues;
  let client: InferenceClient;
  const consumers: Worker[] = [];
  const expressed: string[] = [];
  const moved: string[] = [];
  const request: InferenceRequest = {
    kind: "completion",
    model: { name: "accounts/hearth/models/hearth-tiny", baseModelId: BASE },
    prompts: ["Hi"],
    n: 1,
    sampling: { maxTokens: 4, temperature: 0, stop: [] },
  };
  /** Answers every job of `queueName` with one token: who ran it, and whether the job came marked express. */
  const serve = async (queueName: string, who: string) => {
    const consumer = new Worker(
      queueName,
      async (job) => {
        const p = job.data as InferencePayload;
        const to = { prefix, requestId: p.requestId, replyTo: p.replyTo, logTtlMs: 0 };
        const marked = p.kind !== "embedding" && p.express ? "+express" : "";
        await sendEvent(raw, to, 1, { type: "token", index: 0, text: `${who}${marked}` });
        await sendEvent(raw, to, 2, {
          type: "done",
          choices: [{ index: 0, finishReason: "length" }],
          usage: { promptTokens: 1, completionTokens: 1 },
        });
      },
      { connection: raw.duplicate(), prefix },
    );
    consumers.push(consumer);
    await consumer.waitUntilReady();
    return consumer;
  };
  const run = async (priority: number) => {
    const texts: string[] = [];
    for await (const event of client.run(request, new AbortController().signal, { priority }))
      if (event.type === "token") texts.push(event.text);
    return texts.join("");
  };

  beforeAll(async () => {
    producer = createRedis({ redisUrl }, "producer");
    subscriber = createRedis({ redisUrl }, "subscriber");
    raw = new Redis(redisUrl, { maxRetriesPerRequest: null });
    await waitForRedis(producer, 10_000);
    hub = await ReplyHub.start(subscriber, prefix);
    queues = new ProducerQueues(producer, prefix);
    const observer: InferenceObserver = {
      waiting() {},
      started() {},
      firstToken() {},
      ended() {},
      expressed: (base) => expressed.push(base),
      expressMoved: (base) => moved.push(base),
    };
    client = new InferenceClient(producer, queues, hub, {
      prefix,
      queueTimeoutMs: 10_000,
      maxQueueDepth: 100,
      streamRetentionMs: 60_000,
      firstTokenTimeoutMs: 10_000,
      interTokenTimeoutMs: 10_000,
      redisTimeoutMs: 5_000,
      express: { waitMs: 200 },
      observer,
    });
  });
  afterAll(async () => {
    for (const c of consumers) await c.close();
    await queues?.close();
    hub?.close();
    producer?.disconnect();
    subscriber?.disconnect();
    raw?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
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
    const sharedQueue = new Queue(jobs.inference.queueName(BASE), { connection: raw, prefix });
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
