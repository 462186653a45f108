import path from "node:path";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { createRedis, publishInOrder, subscribersOf, waitForRedis } from "../../src/redis/connection.js";
import { writeAdapterToward } from "../helpers/adapters.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { defaultAccount } from "../helpers/management.js";
import { greedyText } from "../helpers/oracle.js";
import { startPrivateRedisCluster, type PrivateRedisCluster } from "../helpers/redis.js";
import { lastEventId, readSse, textOf } from "../helpers/sse.js";

/**
 * Hearth on a Redis Cluster of three masters (HEARTH_REDIS_CLUSTER): the API and a worker as
 * cluster clients, BullMQ's queues and Hearth's own keys spread over the nodes by their hash
 * tags. Inference (plain, streamed and resumed), a request long past the orphan grace (the
 * worker counts the route's listeners over every node), a deploy through the lifecycle queue,
 * and an adapter's requests through placement.
 */
describe("on a Redis Cluster", () => {
  let cluster: PrivateRedisCluster;
  let hearth: TestHearth;
  let openai: OpenAI;
  let scratch: string;

  beforeAll(async () => {
    cluster = await startPrivateRedisCluster(3);
    hearth = await startTestHearth({ env: { REDIS_URL: cluster.url, HEARTH_REDIS_CLUSTER: "true" } });
    openai = new OpenAI({ apiKey: hearth.apiKey, baseURL: hearth.baseURL, maxRetries: 0 });
    scratch = path.join(hearth.config.dataDir, "scratch");
  }, 120_000);
  afterAll(async () => {
    await hearth?.close();
    await cluster?.stop();
  });

  it("serves completions, streams, resumes a stream from its log, and outlives the orphan grace", async () => {
    const plain = await openai.completions.create({
      model: HEARTH_TINY_REF,
      prompt: "The ",
      max_tokens: 16,
      temperature: 0,
    });
    expect(plain.choices[0]!.text).toBe(greedyText("The ", 16));

    const response = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: HEARTH_TINY_REF,
        prompt: "A hearth ",
        max_tokens: 300,
        temperature: 0,
        stream: true,
      }),
    });
    const requestId = response.headers.get("x-request-id")!;
    const before = await readSse(response, { stop: (read) => read.length >= 5 });
    const rest = await readSse(
      await fetch(`${hearth.baseURL}/streams/${requestId}`, {
        headers: { authorization: `Bearer ${hearth.apiKey}`, "last-event-id": String(lastEventId(before.events)) },
      }),
    );
    expect(rest.ended).toBe(true);
    expect(textOf(before.events) + textOf(rest.events)).toBe(greedyText("A hearth ", 300));
  }, 60_000);

  it("deploys an adapter through the lifecycle queue and serves it through placement", async () => {
    const adapter = await writeAdapterToward(path.join(scratch, "clustered"), "abba abba baba ", { format: "gguf" });
    const name = await defaultAccount(hearth).deployFolder("clustered", adapter.dir);
    for (let i = 0; i < 3; i++) {
      const reply = await openai.completions.create({ model: name, prompt: "ab", max_tokens: 12, temperature: 0 });
      expect(reply.choices[0]!.text).toBe(adapter.greedy("ab", 12));
    }
  }, 60_000);

  it("counts a channel's subscribers over every node, and keeps one route's messages in order", async () => {
    const config = { redisUrl: cluster.url, redisCluster: true };
    const producer = createRedis(config, "producer");
    const subscriber = createRedis(config, "subscriber");
    try {
      await waitForRedis(producer, 10_000);
      await waitForRedis(subscriber, 10_000);
      const channel = "hearth-test:reply:ordered";
      const received: string[] = [];
      subscriber.on("message", (ch: string, message: string) => ch === channel && received.push(message));
      await subscriber.subscribe(channel);
      expect(await subscribersOf(producer, channel)).toBe(1);
      const sent = Array.from({ length: 300 }, (_, i) => String(i));
      await Promise.all(sent.map((m) => publishInOrder(producer, "hearth-test:route:{ordered}", channel, m)));
      await eventually(async () => expect(received).toHaveLength(sent.length));
      expect(received).toEqual(sent);
    } finally {
      producer.disconnect();
      subscriber.disconnect();
    }
  });

  it("makes every role's connection ready at its first try", async () => {
    // ioredis's ready check used to reach a node the producer was still connecting to, fail, and
    // start over with growing delays (an API took up to 11 s to see the cluster): 10 connections
    // of each role, none of which may reconnect before it is ready.
    for (const role of ["producer", "worker", "subscriber"] as const) {
      for (let i = 0; i < 10; i++) {
        const client = createRedis({ redisUrl: cluster.url, redisCluster: true }, role);
        let retries = 0;
        client.on("reconnecting", () => retries++);
        try {
          await waitForRedis(client, 15_000);
          expect({ role, retries }).toEqual({ role, retries: 0 });
        } finally {
          client.disconnect();
        }
      }
    }
  }, 120_000);

  it("spreads Hearth's keys over the masters", async () => {
    const sizes = await Promise.all(
      cluster.ports.map(async (port) => {
        const node = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
        try {
          await node.connect();
          return await node.dbsize();
        } finally {
          node.disconnect();
        }
      }),
    );
    expect(sizes.filter((n) => n > 0).length, JSON.stringify(sizes)).toBeGreaterThanOrEqual(2);
  });

  it("keeps its prefix: another Hearth on it is refused, another API process on its database is not", async () => {
    const onCluster = {
      REDIS_URL: cluster.url,
      HEARTH_REDIS_CLUSTER: "true",
      HEARTH_REDIS_PREFIX: hearth.config.redisPrefix,
    };
    // A fresh PGlite database of its own: another Hearth.
    await expect(startTestHearth({ worker: false, env: onCluster })).rejects.toThrow(
      `whose database is ${hearth.api.database.where}`,
    );
    // The same database, after a restart (PGlite is one process's at a time).
    await hearth.restartApi();
    expect((await fetch(`${hearth.url}/healthz`)).status).toBe(200);
  });
});
