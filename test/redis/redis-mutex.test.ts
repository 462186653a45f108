import crypto from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { RedisMutex } from "../../src/redis/redis-mutex.js";
import { deleteRedisKeys } from "../helpers/redis.js";

/** The lock API processes share, against real Redis: two "processes" are two connections. */
describe("RedisMutex", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let one: RedisClient;
  let two: RedisClient;
  beforeAll(async () => {
    one = createRedis({ redisUrl }, "producer");
    two = createRedis({ redisUrl }, "producer");
    await Promise.all([waitForRedis(one, 10_000), waitForRedis(two, 10_000)]);
  });
  afterAll(async () => {
    one?.disconnect();
    two?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  const mutex = (redis: RedisClient, options: Partial<{ leaseMs: number; waitMs: number }> = {}) =>
    new RedisMutex(redis, prefix, { leaseMs: 1_000, waitMs: 5_000, timeoutMs: 2_000, ...options });

  it("runs the holders of one name one at a time, across connections; other names beside them", async () => {
    const [a, b] = [mutex(one), mutex(two)];
    let inside = 0;
    let most = 0;
    const order: string[] = [];
    const hold = (m: RedisMutex, name: string, label: string) =>
      m.run(name, "busy", async () => {
        most = Math.max(most, ++inside);
        order.push(`${label} in`);
        await sleep(30);
        order.push(`${label} out`);
        inside--;
        return label;
      });
    expect(await Promise.all([hold(a, "x", "a1"), hold(b, "x", "b1"), hold(a, "x", "a2"), hold(b, "x", "b2")])).toEqual(
      ["a1", "b1", "a2", "b2"],
    );
    expect(most).toBe(1);
    for (let i = 0; i < order.length; i += 2) expect(order[i]!.split(" ")[0]).toBe(order[i + 1]!.split(" ")[0]);
    // Another name is another lock: it does not wait for "x".
    inside = 0;
    most = 0;
    await Promise.all([hold(a, "x", "a3"), hold(b, "y", "b3")]);
    expect(most).toBe(2);
    // Released: nothing left behind.
    expect(await one.exists(`${prefix}:lock:x`, `${prefix}:lock:y`)).toBe(0);
  });

  it("keeps the lock past its lease while the holder works, and lets it go when the holder throws", async () => {
    const holder = mutex(one, { leaseMs: 150 });
    const waiter = mutex(two, { leaseMs: 150, waitMs: 100 });
    let release = () => {};
    const holding = holder.run("long", "busy", () => new Promise<void>((resolve) => (release = resolve)));
    await sleep(500); // three leases: renewed all along
    await expect(waiter.run("long", "the long lock is busy", async () => {})).rejects.toMatchObject({
      code: "unavailable",
      message: "the long lock is busy",
    });
    release();
    await holding;
    expect(await waiter.run("long", "busy", async () => "got it")).toBe("got it");

    await expect(
      holder.run("long", "busy", async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await waiter.run("long", "busy", async () => "again")).toBe("again");
  });

  it("takes over the lock of a holder that died, once its lease runs out", async () => {
    // A holder that died leaves its key with its lease, and nobody renews it.
    await one.set(`${prefix}:lock:orphan`, "dead-holder", "PX", 300);
    const started = performance.now();
    expect(await mutex(two).run("orphan", "busy", async () => "taken")).toBe("taken");
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });
});
