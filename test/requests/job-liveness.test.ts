import crypto from "node:crypto";
import { Queue, Worker } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { JobLiveness, type FollowedJob } from "../../src/requests/job-liveness.js";
import { EventInbox } from "../../src/requests/reply-hub.js";
import { LEASE_TTL_MS, leaseKey, type SequencedEvent } from "../../src/requests/stream.js";
import { deleteRedisKeys } from "../helpers/redis.js";

/**
 * The API's watch over a request's job before its worker has taken the job's lease, against
 * real Redis and real BullMQ consumers: a job taken (BullMQ's lock held) with no lease taken
 * ends the request once the lock has been held for a lease's TTL; a job that only waits, or
 * whose worker takes its lease, does not end.
 */
describe("JobLiveness before the lease", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let redis: RedisClient;
  let liveness: JobLiveness;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    redis = createRedis({ redisUrl }, "producer");
    await waitForRedis(redis, 10_000);
    liveness = new JobLiveness(redis, {
      redisPrefix: prefix,
      queueTimeoutMs: 60_000,
      firstTokenTimeoutMs: 60_000,
      interTokenTimeoutMs: 60_000,
    });
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  afterAll(async () => {
    redis?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  function queue(name: string): Queue {
    const q = new Queue(name, { connection: redis, prefix });
    closers.push(() => q.close());
    return q;
  }

  /** A consumer that takes jobs and runs `processor` on them (a worker that takes no lease, or one that does). */
  function consumer(name: string, processor: (jobId: string) => Promise<void>): void {
    const connection = createRedis({ redisUrl }, "worker");
    const worker = new Worker(name, (job) => processor(job.id!), { connection, prefix, maxStalledCount: 0 });
    closers.push(async () => {
      await worker.close(true);
      connection.disconnect();
    });
  }

  /** Follows a job: resolves with the error the watch ended it with, or undefined if it did not within `ms`. */
  async function follow(f: FollowedJob, ms: number, onStarted = () => {}): Promise<SequencedEvent | undefined> {
    const stop = liveness.watch(f, { events: 0, lastEventAt: Date.now(), onStarted });
    const timer = setTimeout(() => f.inbox.close(), ms);
    const event = await f.inbox.next();
    clearTimeout(timer);
    stop();
    return event;
  }

  const hang = () => new Promise<void>(() => {});

  it("ends a request whose job a worker holds without ever taking its lease, a lease's TTL after", async () => {
    const name = `q-${crypto.randomUUID()}`;
    const q = queue(name);
    const requestId = crypto.randomUUID();
    let takenAt = 0;
    consumer(name, () => {
      takenAt = Date.now();
      return hang();
    });
    await q.add("inference", {}, { jobId: requestId });
    const event = await follow({ requestId, queue: q, inbox: new EventInbox(() => {}) }, 10_000);
    expect(event).toMatchObject({
      type: "error",
      error: { code: "unavailable", message: expect.stringMatching(/stopped before it started/) },
    });
    expect(takenAt).toBeGreaterThan(0);
    expect(Date.now() - takenAt).toBeGreaterThan(LEASE_TTL_MS);
  });

  it("lets a job that only waits, or whose worker takes its lease, go on", async () => {
    const waitingName = `q-${crypto.randomUUID()}`;
    const waiting = queue(waitingName);
    const waitingId = crypto.randomUUID();
    await waiting.add("inference", {}, { jobId: waitingId });

    const runningName = `q-${crypto.randomUUID()}`;
    const running = queue(runningName);
    const runningId = crypto.randomUUID();
    consumer(runningName, async (jobId) => {
      // What a Hearth worker does first (streamed-job.ts), then renews.
      for (;;) {
        await redis.set(leaseKey(prefix, jobId), "worker", "PX", LEASE_TTL_MS);
        await new Promise((r) => setTimeout(r, 200));
      }
    });
    await running.add("inference", {}, { jobId: runningId });
    let started = false;
    const [waited, ran] = await Promise.all([
      follow({ requestId: waitingId, queue: waiting, inbox: new EventInbox(() => {}) }, 3 * LEASE_TTL_MS),
      follow({ requestId: runningId, queue: running, inbox: new EventInbox(() => {}) }, 3 * LEASE_TTL_MS, () => {
        started = true;
      }),
    ]);
    expect(waited).toBeUndefined();
    expect(ran).toBeUndefined();
    expect(started).toBe(true);
  });

  it("reads the lock in the job's queue of the moment (a placed job moved to the shared queue)", async () => {
    const placedName = `q-${crypto.randomUUID()}`;
    const sharedName = `q-${crypto.randomUUID()}`;
    const placed = queue(placedName);
    const shared = queue(sharedName);
    const requestId = crypto.randomUUID();
    await placed.add("inference", {}, { jobId: requestId });
    const f: FollowedJob = { requestId, queue: placed, inbox: new EventInbox(() => {}) };
    const ended = follow(f, 10_000);
    // Moved as queue-lanes.ts moves it: out of the placed queue, into the shared one, where a worker takes it and dies.
    await new Promise((r) => setTimeout(r, 500));
    await placed.remove(requestId);
    await shared.add("inference", {}, { jobId: requestId });
    f.queue = shared;
    consumer(sharedName, hang);
    expect(await ended).toMatchObject({
      type: "error",
      error: { message: expect.stringMatching(/before it started/) },
    });
  });
});
