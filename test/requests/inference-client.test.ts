import crypto from "node:crypto";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RedisMonitor } from "../../bench/src/redis-monitor.js";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { InferenceClient, type InferenceRequest, type RunOptions } from "../../src/requests/inference-client.js";
import { ProducerQueues } from "../../src/jobs/producer-queues.js";
import { jobs } from "../../src/jobs/jobs.js";
import { ReplyHub } from "../../src/requests/reply-hub.js";
import { sendEvent } from "../../src/requests/stream.js";
import { deleteRedisKeys } from "../helpers/redis.js";

const MODEL = "accounts/hearth/models/hearth-tiny";
const request: InferenceRequest = {
  kind: "completion",
  model: { name: MODEL, baseModelId: "hearth-tiny" },
  prompts: ["Hi"],
  n: 1,
  sampling: { maxTokens: 4, temperature: 0, stop: [] },
};

// The queue-depth limit, with no worker: jobs stay waiting until the test takes them back.
describe("InferenceClient queue depth", () => {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  let producer: RedisClient;
  let subscriber: RedisClient;
  let raw: Redis;
  let hub: ReplyHub;
  let queue: Queue;
  const queues: ProducerQueues[] = [];
  const client = (maxQueueDepth: number) => {
    const q = new ProducerQueues(producer, prefix);
    queues.push(q);
    return new InferenceClient(producer, q, hub, {
      redisPrefix: prefix,
      queueTimeoutMs: 60_000,
      maxQueueDepth,
      streamRetentionMs: 60_000,
      firstTokenTimeoutMs: 60_000,
      interTokenTimeoutMs: 60_000,
      redisCommandTimeoutMs: 5_000,
    });
  };
  const started: { abort: AbortController; run: AsyncGenerator; next: Promise<unknown> }[] = [];
  /** Starts a request; it waits (queued) until aborted. */
  const start = (c: InferenceClient, options: RunOptions = {}) => {
    const abort = new AbortController();
    const run = c.run(request, abort.signal, options);
    const next = run.next();
    started.push({ abort, run, next });
    return next;
  };
  const waitingCount = async (n: number) => {
    for (let i = 0; i < 500 && (await queue.getWaitingCount()) !== n; i++) await new Promise((r) => setTimeout(r, 10));
    return queue.getWaitingCount();
  };

  beforeAll(async () => {
    producer = createRedis({ redisUrl }, "producer");
    subscriber = createRedis({ redisUrl }, "subscriber");
    raw = new Redis(redisUrl);
    await waitForRedis(producer, 10_000);
    hub = await ReplyHub.start(subscriber, prefix);
    queue = new Queue(jobs.inference.queueName("hearth-tiny"), { connection: raw, prefix });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const s of started.splice(0)) {
      s.abort.abort();
      await s.next.catch(() => {});
      await s.run.return(undefined).catch(() => {});
    }
    expect(await waitingCount(0)).toBe(0);
  });
  afterAll(async () => {
    for (const q of queues) await q.close();
    await queue?.close();
    hub?.close();
    producer?.disconnect();
    subscriber?.disconnect();
    raw?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("admits up to the limit, then answers 429 and leaves the refused job out of the queue", async () => {
    const c = client(2);
    void start(c);
    void start(c);
    expect(await waitingCount(2)).toBe(2);
    const refused = c.run(request, new AbortController().signal).next();
    await expect(refused).rejects.toMatchObject({
      code: "rate_limited",
      param: null,
      message: `Too many requests are queued for ${MODEL} (2); retry shortly.`,
    });
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it("does not count the request's own job: a limit of 1 admits one request into an empty queue", async () => {
    const c = client(1);
    void start(c);
    expect(await waitingCount(1)).toBe(1);
    await expect(c.run(request, new AbortController().signal).next()).rejects.toMatchObject({ code: "rate_limited" });
    expect(await queue.getWaitingCount()).toBe(1);
  });

  it("lets the job run when a worker took it before it could be taken back", async () => {
    const c = client(1);
    void start(c);
    expect(await waitingCount(1)).toBe(1);
    const [first] = await queue.getWaiting();
    // BullMQ's answer for a job a worker holds: nothing removed.
    vi.spyOn(Queue.prototype, "remove").mockResolvedValueOnce(0);
    const next = start(c);
    expect(await waitingCount(2)).toBe(2);
    const second = (await queue.getWaiting()).find((j) => j.id !== first!.id)!;
    const to = { prefix, requestId: second.data.requestId, replyTo: second.data.replyTo, logTtlMs: 0 };
    await sendEvent(raw, to, 1, { type: "token", index: 0, text: "ran" });
    expect(await next).toEqual({ done: false, value: { type: "token", index: 0, text: "ran", seq: 1 } });
  });

  it("starts a resumable request's log before its job is added, and takes the job back when the log fails", async () => {
    const c = client(10);
    const resumable = { accountId: "acct", view: { endpoint: "completion" } };
    // Every command Redis runs, in order: the log's meta entry must come before the job's add.
    const commands: string[][] = [];
    const monitor = await RedisMonitor.open(redisUrl, ({ args }) => commands.push(args));
    const requestId = crypto.randomUUID();
    void start(c, { requestId, resumable });
    expect(await waitingCount(1)).toBe(1);
    monitor.close();
    const logStart = commands.findIndex((a) => a[0] === "xadd" && a[1] === `${prefix}:events:{${requestId}}`);
    const add = commands.findIndex((a) => a[0] === "evalsha" && a.some((arg) => arg.includes(requestId)));
    expect(logStart).toBeGreaterThanOrEqual(0);
    expect(add).toBeGreaterThan(logStart);

    // A log that cannot start (its key holds a string: XADD fails): the request fails, and its job is gone.
    const broken = crypto.randomUUID();
    await raw.set(`${prefix}:events:{${broken}}`, "not a stream");
    const run = c.run(request, new AbortController().signal, { requestId: broken, resumable });
    await expect(run.next()).rejects.toMatchObject({ code: "unavailable" });
    expect(await queue.getJob(broken)).toBeUndefined();
    expect(await queue.getWaitingCount()).toBe(1);
  });
});
