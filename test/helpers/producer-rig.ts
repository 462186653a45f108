import crypto from "node:crypto";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { InferenceClient } from "../../src/requests/inference-client.js";
import type { InferenceClientOptions } from "../../src/requests/inference-client-options.js";
import type { InferenceObserver } from "../../src/requests/inference-observer.js";
import type { InferencePayload } from "../../src/jobs/jobs.js";
import { ProducerQueues } from "../../src/jobs/producer-queues.js";
import { ReplyHub } from "../../src/requests/reply-hub.js";
import { sendEvent } from "../../src/requests/stream.js";
import { deleteRedisKeys } from "./redis.js";

/**
 * The API's producer side against the machine's real Redis, under a prefix of its own: its
 * connections, reply hub and queues, InferenceClients on them, and stand-in workers (BullMQ
 * consumers that answer each job with one token) for tests of where jobs go.
 */
export interface ProducerRig {
  prefix: string;
  producer: RedisClient;
  /** A plain connection for the test's own reads and writes. */
  raw: Redis;
  queues: ProducerQueues;
  /** An InferenceClient with short test timeouts, an observer with no-op defaults, and `options` on top. */
  client(options?: Partial<InferenceClientOptions>, observer?: Partial<InferenceObserver>): InferenceClient;
  /** Consumes `queueName`, answering every job with one token: `answer` of its payload. */
  serve(queueName: string, answer: (payload: InferencePayload) => string): Promise<Worker>;
  close(): Promise<void>;
}

export async function startProducerRig(): Promise<ProducerRig> {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  const producer = createRedis({ redisUrl }, "producer");
  const subscriber = createRedis({ redisUrl }, "subscriber");
  const raw = new Redis(redisUrl, { maxRetriesPerRequest: null });
  await waitForRedis(producer, 10_000);
  const hub = await ReplyHub.start(subscriber, prefix);
  const queues = new ProducerQueues(producer, prefix);
  const consumers: Worker[] = [];
  return {
    prefix,
    producer,
    raw,
    queues,
    client: (options = {}, observer = {}) =>
      new InferenceClient(producer, queues, hub, {
        redisPrefix: prefix,
        queueTimeoutMs: 10_000,
        maxQueueDepth: 100,
        streamRetentionMs: 60_000,
        firstTokenTimeoutMs: 10_000,
        interTokenTimeoutMs: 10_000,
        redisCommandTimeoutMs: 5_000,
        ...options,
        observer: { waiting() {}, started() {}, firstToken() {}, ended() {}, ...observer },
      }),
    async serve(queueName, answer) {
      const consumer = new Worker(
        queueName,
        async (job) => {
          const p = job.data as InferencePayload;
          const to = { prefix, requestId: p.requestId, replyTo: p.replyTo, logTtlMs: 0 };
          await sendEvent(raw, to, 1, { type: "token", index: 0, text: answer(p) });
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
    },
    async close() {
      for (const c of consumers) await c.close();
      await queues.close();
      hub.close();
      producer.disconnect();
      subscriber.disconnect();
      raw.disconnect();
      await deleteRedisKeys(redisUrl, `${prefix}:*`);
    },
  };
}

/** The text of a request's token events, joined. */
export async function tokensOf(run: AsyncGenerator<{ type: string; text?: string }>): Promise<string> {
  const texts: string[] = [];
  for await (const event of run) if (event.type === "token") texts.push(event.text!);
  return texts.join("");
}
