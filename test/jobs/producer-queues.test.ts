import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.js";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { ProducerQueues } from "../../src/jobs/producer-queues.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

// Each test has a redis-server of its own, which it pauses (SIGSTOP) or kills.
describe("ProducerQueues", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function setUp(port?: number): Promise<{ server: PrivateRedis; redis: RedisClient; queues: ProducerQueues }> {
    const server = await startPrivateRedis(port);
    cleanup.push(() => server.kill());
    const redis = createRedis({ redisUrl: server.url }, "producer");
    cleanup.push(() => redis.disconnect());
    await waitForRedis(redis, 5_000);
    return { server, redis, queues: new ProducerQueues(redis, "hearth-test") };
  }

  /** Unhandled rejections seen from now until the returned function is called. */
  function watchUnhandled(): () => unknown[] {
    const seen: unknown[] = [];
    const onRejection = (reason: unknown) => seen.push(reason);
    process.on("unhandledRejection", onRejection);
    return () => {
      process.off("unhandledRejection", onRejection);
      return seen;
    };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  it("opens a queue once and adds to it", async () => {
    const { queues } = await setUp();
    cleanup.push(() => queues.close());
    const queue = queues.get("q");
    expect(queues.get("q")).toBe(queue);
    const job = await queue.add("x", { n: 1 });
    expect(await queue.getJobState(job.id!)).toBe("waiting");
  });

  it("answers 503 at once while Redis is down, without opening a queue", async () => {
    const { server, redis, queues } = await setUp();
    await server.kill();
    await until(() => redis.status !== "ready");
    let thrown: unknown;
    try {
      queues.get("q");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("unavailable");
  });

  it("closes with a set-up in flight and its later failure is handled", async () => {
    const unhandled = watchUnhandled();
    const { server, redis, queues } = await setUp();
    server.process.kill("SIGSTOP"); // the queue's set-up now waits for an answer
    const queue = queues.get("q");
    await queues.close(200);
    await server.kill(); // the set-up fails now, after the close
    await expect(queue.waitUntilReady()).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    redis.disconnect();
    expect(unhandled()).toEqual([]);
  });

  it("replaces a queue whose set-up failed, and the new one works once Redis is back", async () => {
    const { server, redis, queues } = await setUp();
    cleanup.push(() => queues.close());
    server.process.kill("SIGSTOP");
    const broken = queues.get("q");
    await server.kill();
    await expect(broken.waitUntilReady()).rejects.toThrow();
    await new Promise((r) => setImmediate(r));
    const revived = await startPrivateRedis(server.port);
    cleanup.push(() => revived.kill());
    await waitForRedis(redis, 10_000);
    const fresh = queues.get("q");
    expect(fresh).not.toBe(broken);
    const job = await fresh.add("x", { n: 1 });
    expect(await fresh.getJobState(job.id!)).toBe("waiting");
  });
});
