import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, queueConnection, type RedisClient } from "../../src/redis/connection.js";
import { decodeMessage, eventLogKey, sendEvent, type ReplyAddress } from "../../src/requests/stream.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

/**
 * A worker's publisher sends the events published in one turn of the event loop, each its own
 * EVAL, in one write: Redis reads them at once (ioredis's auto-pipelining), where a plain
 * connection wrote 16 times and Redis read 8 to 16 times (a probe on 2 cores). The events still
 * reach the subscriber and the logs in order. BullMQ's connections, duplicated from it, do not
 * pipeline.
 */
describe("the worker's publisher", () => {
  let redis: PrivateRedis;
  const connections: RedisClient[] = [];
  const open = (role: "publisher" | "worker" | "subscriber") => {
    const connection = createRedis({ redisUrl: redis.url }, role);
    connections.push(connection);
    return connection;
  };
  const readsProcessed = async (on: RedisClient) =>
    Number(/total_reads_processed:(\d+)/.exec(await on.info("stats"))?.[1]);

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const c of connections) c.disconnect();
    await redis?.kill();
  });

  it("sends the events of one turn together, and they arrive in order", async () => {
    const publisher = open("publisher");
    const probe = open("worker");
    const subscriber = open("subscriber") as Redis;
    const received: { id: string; seq: number }[] = [];
    subscriber.on("message", (_channel: string, message: string) => {
      const decoded = decodeMessage(message);
      if (decoded) received.push({ id: decoded.id, seq: decoded.seq });
    });
    await subscriber.subscribe("t:reply:api");
    await Promise.all([publisher.ping(), probe.ping()]);

    const address = (i: number): ReplyAddress => ({
      prefix: "t",
      requestId: `request-${i}`,
      replyTo: "t:reply:api",
      logTtlMs: 60_000,
    });
    for (let seq = 1; seq <= 3; seq++) {
      const before = await readsProcessed(probe);
      // One token for each of 16 requests, published in one turn of the event loop.
      const sends = Array.from({ length: 16 }, (_, i) =>
        sendEvent(publisher, address(i), seq, { type: "token", index: 0, text: `${i}.${seq} ` }),
      );
      expect((publisher as Redis).autoPipelineQueueSize).toBe(16);
      expect(await Promise.all(sends)).toEqual(Array(16).fill(1));
      // The 16 EVALs in one read or two, and the probe's own INFO.
      expect((await readsProcessed(probe)) - before).toBeLessThanOrEqual(3);
    }

    await expect.poll(() => received.length).toBe(48);
    for (let i = 0; i < 16; i++) {
      expect(received.filter((r) => r.id === `request-${i}`).map((r) => r.seq)).toEqual([1, 2, 3]);
      const log = await probe.xrange(eventLogKey("t", `request-${i}`), "-", "+");
      expect(log.map(([id]) => id)).toEqual(["1-1", "1-2", "1-3"]);
    }
  });

  it("gives BullMQ connections that send each command as it comes", async () => {
    const publisher = open("publisher");
    const forQueues = queueConnection(publisher) as Redis;
    connections.push(forQueues);
    await forQueues.ping();
    expect(forQueues.options.enableAutoPipelining).toBe(false);
    const sent = Promise.all([forQueues.set("t:a", "1"), forQueues.get("t:a")]);
    expect(forQueues.autoPipelineQueueSize).toBe(0);
    expect(await sent).toEqual(["OK", "1"]);
  });
});
