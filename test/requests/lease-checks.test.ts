import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { type LeaseCheck, LeaseChecks } from "../../src/requests/lease-checks.js";
import { deleteRedisKeys } from "../helpers/redis.js";

/** The API's lease checks against real Redis: every lease it follows read in one round trip per period. */
describe("LeaseChecks", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let redis: RedisClient;
  beforeAll(async () => {
    redis = createRedis({ redisUrl }, "producer");
    await waitForRedis(redis, 10_000);
  });
  afterAll(async () => {
    redis?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("reads every watched lease in one pipeline per period, and stops once nothing is watched", async () => {
    const checks = new LeaseChecks(redis, 50);
    const pipelines = vi.spyOn(redis, "pipeline");
    await redis.set(`${prefix}:held`, "worker");
    const seen = new Map<string, LeaseCheck[]>();
    const watch = (name: string) =>
      checks.watch(
        () => [`${prefix}:${name}`],
        ([held]) => seen.set(name, [...(seen.get(name) ?? []), held]),
      );
    const stops = ["held", "gone", "held"].map(watch);
    await expect.poll(() => seen.get("gone")?.length ?? 0).toBeGreaterThanOrEqual(2);
    // Both watchers of one key hear each reading; one pipeline per period holds every key once.
    expect(seen.get("held")!.length).toBe(2 * seen.get("gone")!.length);
    expect(new Set(seen.get("held"))).toEqual(new Set([1]));
    expect(new Set(seen.get("gone"))).toEqual(new Set([0]));
    // One pipeline per reading; the next period's may be out already, its answer not yet read.
    const readings = seen.get("gone")!.length;
    expect(pipelines.mock.calls.length).toBeGreaterThanOrEqual(readings);
    expect(pipelines.mock.calls.length).toBeLessThanOrEqual(readings + 1);
    expect(pipelines.mock.calls.every(([commands]) => (commands as unknown[]).length === 2)).toBe(true);

    // A lease that goes is read as gone at the next period.
    await redis.del(`${prefix}:held`);
    const before = seen.get("held")!.length;
    await expect.poll(() => seen.get("held")!.slice(before)).toContain(0);

    // A watcher's keys are asked for each period, and it hears them read in its order.
    let second = false;
    const pairs: LeaseCheck[][] = [];
    stops.push(
      checks.watch(
        () => (second ? [`${prefix}:gone`, `${prefix}:other`] : [`${prefix}:gone`]),
        (found) => pairs.push(found),
      ),
    );
    await redis.set(`${prefix}:other`, "worker");
    await expect.poll(() => pairs.length).toBeGreaterThan(0);
    second = true;
    await expect.poll(() => pairs.at(-1)).toEqual([0, 1]);
    expect(pairs[0]).toEqual([0]);

    for (const stop of stops) stop();
    const calls = pipelines.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pipelines.mock.calls.length).toBe(calls);
    pipelines.mockRestore();
  });
});
