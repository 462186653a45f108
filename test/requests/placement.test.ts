import crypto from "node:crypto";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Placement, placementKey } from "../../src/requests/placement.js";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import type { InferenceClient, InferenceRequest } from "../../src/requests/inference-client.js";
import { jobs } from "../../src/jobs/jobs.js";
import { ProducerQueues } from "../../src/jobs/producer-queues.js";
import { sweepWorkerQueues } from "../../src/jobs/worker-queue-sweep.js";
import { claimPrefix } from "../../src/redis/prefix-owner.js";
import { announceWorker, type WorkerInfo } from "../../src/jobs/worker-registry.js";
import { type ProducerRig, startProducerRig, tokensOf } from "../helpers/producer-rig.js";
import { deleteRedisKeys } from "../helpers/redis.js";

const BASE = "hearth-tiny";

/** A heartbeat as a worker of BASE sends it: `adapterKeys` warm, `requests` running, 4 slots, the last prompts' `prefixKeys`. */
function worker(id: string, adapterKeys: string[] = [], requests = 0, prefixKeys: string[] = []): WorkerInfo {
  return {
    id,
    pid: 1,
    host: "test",
    models: [BASE],
    roles: ["text"],
    imageModels: [],
    startedAt: new Date().toISOString(),
    serving: [
      {
        model: BASE,
        adapters: adapterKeys.length,
        adapterKeys,
        prefixKeys,
        requests,
        freeSequences: { base: 4, adapters: 8 },
        slots: 4,
      },
    ],
  };
}

/**
 * Placement against real Redis, with heartbeats written as workers write them: warm first,
 * then the least loaded (by its own queue, read fresh) and recorded for every API process,
 * and the shared queue when no worker reports the model.
 */
describe("Placement", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  let prefix: string;
  let redis: RedisClient;
  let queues: ProducerQueues;
  const extra: Queue[] = [];
  const announce = (...infos: WorkerInfo[]) =>
    Promise.all(infos.map((info) => announceWorker(redis, prefix, info, 60_000)));
  const own = (workerId: string) => jobs.inference.queueName(BASE, workerId);
  /** Puts `n` jobs waiting on a worker's own queue (nothing consumes it here). */
  const load = async (workerId: string, n: number) => {
    const queue = new Queue(own(workerId), { connection: redis, prefix });
    extra.push(queue);
    for (let i = 0; i < n; i++) await queue.add("inference", {});
  };

  beforeAll(async () => {
    redis = createRedis({ redisUrl }, "producer");
    await waitForRedis(redis, 10_000);
  });
  beforeEach(async () => {
    prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
    await queues?.close();
    queues = new ProducerQueues(redis, prefix);
  });
  afterAll(async () => {
    for (const q of extra) await q.close();
    await queues?.close();
    redis?.disconnect();
  });

  it("sends an adapter to the worker that has it warm", async () => {
    await announce(worker("w1", ["x"]), worker("w2", ["y"]), worker("w3"));
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, "y")).toEqual({ queueName: own("w2"), workerId: "w2", reason: "warm" });
    expect(await placement.place(BASE, "x")).toMatchObject({ workerId: "w1", reason: "warm" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("between two warm workers, picks the one with more free slots", async () => {
    await announce(worker("w1", ["x"], 3), worker("w2", ["x"], 1));
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, "x")).toMatchObject({ workerId: "w2", reason: "warm" });
    // Jobs waiting on w2's own queue count against it, read at once (not from its heartbeat).
    await load("w2", 3);
    expect(await placement.place(BASE, "x")).toMatchObject({ workerId: "w1", reason: "warm" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("passes over a warm worker loaded well above the others: the least loaded one takes it too", async () => {
    // 3 running on w1 of 3 in all: with this request the mean is 4/3, the bound 1.5 × that: 2.
    await announce(worker("w1", ["x"], 3), worker("w2", ["a"]), worker("w3"));
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, "x")).toMatchObject({ workerId: "w3", reason: "spilled" });
    // A spill leaves the record alone: x stays w1's first.
    expect(await redis.hget(placementKey(prefix, BASE), "x")).toBeNull();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("gives a cold adapter to the least loaded worker and records it, so another API process sends it there too", async () => {
    await announce(worker("w1", [], 2), worker("w2", ["a", "b"]), worker("w3"));
    const first = new Placement(redis, queues, { prefix });
    // w2 and w3 have 4 free slots each (w1 runs 2); between them, w3 has fewer adapters.
    expect(await first.place(BASE, "z")).toEqual({ queueName: own("w3"), workerId: "w3", reason: "least-loaded" });
    expect((await redis.hget(placementKey(prefix, BASE), "z"))?.split(" ")[0]).toBe("w3");
    const second = new Placement(redis, new ProducerQueues(redis, prefix), { prefix });
    expect(await second.place(BASE, "z")).toMatchObject({ workerId: "w3", reason: "assigned" });
    // One job waiting on w3's own queue, read at once: the next cold adapter goes to w2.
    await load("w3", 1);
    expect(await second.place(BASE, "q")).toMatchObject({ workerId: "w2", reason: "least-loaded" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("trusts a record only until heartbeats should have listed it", async () => {
    let now = Date.now();
    await announce(worker("w1"), worker("w2"));
    const placement = new Placement(redis, queues, { prefix, trustMs: 15_000, viewMs: 0, now: () => now });
    const chosen = (await placement.place(BASE, "z")).workerId!;
    expect(await placement.place(BASE, "z")).toMatchObject({ workerId: chosen, reason: "assigned" });
    // The chosen worker evicted it since (its heartbeats do not list z) and is now the busier one.
    now += 16_000;
    await load(chosen, 2);
    const other = chosen === "w1" ? "w2" : "w1";
    expect(await placement.place(BASE, "z")).toMatchObject({ workerId: other, reason: "least-loaded" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("sends a prompt to the worker that ran its prefix, a base model's or an adapter's, else as without it", async () => {
    await announce(worker("w1", [], 0, ["p"]), worker("w2", ["x"], 0, ["q"]), worker("w3"));
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, undefined, "p")).toEqual({
      queueName: own("w1"),
      workerId: "w1",
      reason: "prefix",
    });
    // The prefix comes before the adapter: w1 ran x's prompt, which w2 holds x warm for.
    expect(await placement.place(BASE, "x", "p")).toMatchObject({ workerId: "w1", reason: "prefix" });
    // A base model's prompt nobody holds, or a short one (no key): the shared queue.
    for (const key of ["r", undefined])
      expect(await placement.place(BASE, undefined, key)).toEqual({
        queueName: jobs.inference.queueName(BASE),
        reason: "shared",
      });
    // An adapter's prompt nobody holds: placed by its adapter as before.
    expect(await placement.place(BASE, "x", "r")).toMatchObject({ workerId: "w2", reason: "warm" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("passes over a worker holding the prefix once it is loaded well above the others", async () => {
    // 3 running on w1: with this request the mean is 4/3 over 3 workers, the bound 2.
    await announce(worker("w1", [], 3, ["p", "solo"]), worker("w2", [], 0, ["p"]), worker("w3"));
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, undefined, "p")).toMatchObject({ workerId: "w2", reason: "prefix" });
    // Its only holder over the bound: a base model's request goes to the shared queue.
    expect(await placement.place(BASE, undefined, "solo")).toMatchObject({ reason: "shared" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("uses the shared queue when no live worker reports the base model", async () => {
    const placement = new Placement(redis, queues, { prefix });
    expect(await placement.place(BASE, "x")).toEqual({ queueName: jobs.inference.queueName(BASE), reason: "shared" });
    await announce({ ...worker("w1", ["x"]), models: ["other"], serving: [] });
    expect(await new Placement(redis, queues, { prefix }).place(BASE, "x")).toMatchObject({ reason: "shared" });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });
});

/**
 * The own queues of workers that are gone are removed; a live worker's, and that of a worker
 * whose consumer runs but which has sent no heartbeat yet (still loading its models), stay.
 */
describe("sweepWorkerQueues", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let redis: Redis;
  const opened: { close(): Promise<void> }[] = [];

  const owner = { id: "the-owner", database: "PGlite in /the-owner" };
  const stranger = { id: "a-stranger", database: "PGlite in /a-stranger" };

  beforeAll(async () => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    await claimPrefix(redis, prefix, owner);
  });
  afterAll(async () => {
    for (const o of opened) await o.close();
    redis?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("obliterates the queues of workers that are gone, and only those", async () => {
    const own = (id: string) => jobs.inference.queueName(BASE, id);
    // "gone": its consumer ran and stopped (BullMQ's stalled-check key expired), a job left waiting.
    const goneConsumer = new Worker(own("gone"), async () => {}, { connection: redis.duplicate(), prefix });
    await goneConsumer.waitUntilReady();
    await goneConsumer.close();
    await redis.del(`${prefix}:${own("gone")}:stalled-check`);
    const goneQueue = new Queue(own("gone"), { connection: redis, prefix });
    opened.push(goneQueue);
    await goneQueue.add("inference", {});
    // "live" has a heartbeat; "starting" has a running consumer and no heartbeat yet.
    await announceWorker(redis, prefix, worker("live"), 60_000);
    for (const id of ["live", "starting"]) {
      const consumer = new Worker(own(id), async () => {}, { connection: redis.duplicate(), prefix });
      opened.push(consumer);
      await consumer.waitUntilReady();
    }

    // Another Hearth on the prefix (its own database) sees gone workers that may be this one's: it
    // refuses to sweep, and the queue stays, job and all.
    await expect(sweepWorkerQueues(redis, prefix, stranger)).rejects.toThrow(/belongs to another Hearth/);
    expect(await goneQueue.getWaitingCount()).toBe(1);

    expect(await sweepWorkerQueues(redis, prefix, owner)).toEqual([own("gone")]);
    expect(await redis.keys(`${prefix}:${own("gone")}:*`)).toEqual([]);
    for (const id of ["live", "starting"]) expect(await redis.exists(`${prefix}:${own(id)}:meta`)).toBe(1);
    expect(await sweepWorkerQueues(redis, prefix, owner)).toEqual([]);
  });
});

/**
 * The bound: a placed request its worker does not start within `waitMs` moves to the shared
 * queue and is served from there; one the worker starts in time stays.
 */
describe("InferenceClient with placement", () => {
  let rig: ProducerRig;
  let client: InferenceClient;
  let prefix: string;
  let raw: Redis;
  const moved: string[] = [];
  const placed: string[] = [];
  const request: InferenceRequest = {
    kind: "completion",
    model: { name: "accounts/default/models/x", baseModelId: BASE, adapter: { key: "x" } },
    prompts: ["Hi"],
    n: 1,
    sampling: { maxTokens: 4, temperature: 0, stop: [] },
  };
  /** A stand-in worker of `queueName` whose one token names it. */
  const serve = (queueName: string, who: string) => rig.serve(queueName, () => who);

  beforeAll(async () => {
    rig = await startProducerRig();
    ({ prefix, raw } = rig);
    client = rig.client(
      {
        lanes: {
          placement: { placer: new Placement(rig.producer, rig.queues, { prefix, viewMs: 0 }), waitMs: 200 },
        },
      },
      { placed: (_, reason) => placed.push(reason), moved: (base) => moved.push(base) },
    );
    // The shared queue has a worker; "frozen" has x warm in its heartbeat but takes nothing.
    await serve(jobs.inference.queueName(BASE), "shared");
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("moves a request its placed worker does not start in time to the shared queue, which serves it", async () => {
    await announceWorker(raw, prefix, worker("frozen", ["x"]), 60_000);
    const started = Date.now();
    const text = await tokensOf(client.run(request, new AbortController().signal));
    expect(text).toBe("shared");
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(placed).toEqual(["warm"]);
    expect(moved).toEqual([BASE]);
    const frozen = new Queue(jobs.inference.queueName(BASE, "frozen"), { connection: raw, prefix });
    expect(await frozen.getJobCounts("waiting", "prioritized", "active")).toMatchObject({
      waiting: 0,
      prioritized: 0,
      active: 0,
    });
    await frozen.close();
  });

  it("leaves a request its placed worker started where it is", async () => {
    await serve(jobs.inference.queueName(BASE, "frozen"), "own");
    moved.length = 0;
    for (let i = 0; i < 3; i++) expect(await tokensOf(client.run(request, new AbortController().signal))).toBe("own");
    await new Promise((r) => setTimeout(r, 300));
    expect(moved).toEqual([]);
  });
});
