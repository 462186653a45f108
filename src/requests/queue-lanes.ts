import type { Config } from "../config.js";
import type { Job, Queue } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import { AppError } from "../errors.js";
import type { Placement, PlacementReason } from "./placement.js";
import { jobs, type ImagePayload, type InferencePayload } from "../jobs/jobs.js";
import type { ProducerQueues } from "../jobs/producer-queues.js";
import { callRedis } from "../redis/redis-call.js";
import { promptPrefixKey } from "../jobs/prompt-prefix.js";

export type StreamedJob = "inference" | "image";

/** Where a job waits: its model's shared queue, a worker's own (placement), or the express lane. */
export type Lane = "shared" | "placed" | "express";

/** The lanes besides the shared queue, each off when absent. */
export interface LaneChoices {
  /** Placement by prefix and adapter, and the longest a placed job waits for its worker before it moves to the shared queue. */
  placement?: { placer: Placement; waitMs: number };
  /**
   * Fair scheduling's express lane (docs/security.md): a base model's request from an account
   * with nothing else in flight (priority 1) goes to the model's express queue when the shared
   * queue has a backlog, or when a batch's lines run from it and nothing waits in the lane.
   * Not started within `waitMs`, it moves to the shared queue (where its priority still puts it
   * first).
   */
  express?: { waitMs: number };
}

export interface QueueLanesOptions extends Pick<Config, "maxQueueDepth" | "redisCommandTimeoutMs"> {
  lanes?: LaneChoices;
  observer?: {
    placed?(baseModelId: string, reason: PlacementReason): void;
    moved?(baseModelId: string): void;
    expressed?(baseModelId: string): void;
    expressMoved?(baseModelId: string): void;
  };
}

/** A job's queue, chosen: its lane, and the shared queue's waiting jobs when they were read to choose. */
export interface Chosen {
  queue: Queue;
  lane: Lane;
  sharedWaiting?: number;
}

/**
 * The queues a request's job may wait in, for the producer (InferenceClient): which one a job
 * goes to (placement for an adapter's request or a long prompt's, the express lane for an account's lone request
 * while the model's shared queue has a backlog, else the shared queue), adding it there within
 * the queue depth bound, and moving it to the shared queue when no worker of its lane has
 * started it in time. docs/architecture.md has the design, docs/security.md the express lane.
 */
export class QueueLanes {
  constructor(
    private readonly redis: RedisClient,
    private readonly queues: ProducerQueues,
    private readonly options: QueueLanesOptions,
  ) {}

  async choose(
    name: StreamedJob,
    payload: InferencePayload | ImagePayload,
    shared: Queue,
    priority: number | undefined,
  ): Promise<Chosen> {
    if (name !== "inference") return { queue: shared, lane: "shared" };
    const { baseModelId } = payload.model;
    const adapterKey = payload.model.adapter?.key;
    const { placement, express } = this.options.lanes ?? {};
    const { observer } = this.options;
    const prefixKey = placement ? promptPrefixKey(payload as InferencePayload) : undefined;
    if (placement && (adapterKey !== undefined || prefixKey !== undefined)) {
      // Placement that cannot read Redis leaves the request to the shared queue (whose add then tells).
      const placed = await this.redisCall(() => placement.placer.place(baseModelId, adapterKey, prefixKey)).catch(
        () => undefined,
      );
      if (placed?.workerId !== undefined) {
        observer?.placed?.(baseModelId, placed.reason);
        return { queue: this.queues.get(placed.queueName), lane: "placed" };
      }
      // A base model's request that no worker holds the prefix of goes on as without placement.
      if (adapterKey !== undefined) observer?.placed?.(baseModelId, "shared");
    }
    if (adapterKey !== undefined) return { queue: shared, lane: "shared" };
    if (!express || priority !== 1) return { queue: shared, lane: "shared" };
    const lane = this.queues.get(jobs.inference.expressQueueName(baseModelId));
    // Sent together: one round trip.
    const [sharedWaiting, batchHolds] = await this.redisCall(() =>
      Promise.all([waitingCount(this.redis, shared), batchLinesRunAndLaneIdle(this.redis, shared, lane)]),
    );
    if (sharedWaiting === 0 && !batchHolds) return { queue: shared, lane: "shared", sharedWaiting };
    observer?.expressed?.(baseModelId);
    return { queue: lane, lane: "express", sharedWaiting };
  }

  /**
   * Adds the job to its chosen queue unless `maxQueueDepth` jobs already wait for its model (in
   * its shared queue and, for a placed or express job, in its own), in one round trip: the count
   * and the add go out together, the count first on the same connection (so it does not include
   * this job; the shared queue's is reused when the choice read it). When the queue was full (or
   * the count failed) the job is taken back and the request fails, with 429 (or 503); should a
   * worker have taken it meanwhile, it runs.
   */
  async add(
    { queue, sharedWaiting }: Chosen,
    shared: Queue,
    name: StreamedJob,
    payload: InferencePayload | ImagePayload,
    priority: number | undefined,
  ): Promise<Job> {
    const counted = this.redisCall(async () => {
      const [own, all] = await Promise.all([
        queue === shared ? 0 : waitingCount(this.redis, queue),
        sharedWaiting ?? waitingCount(this.redis, shared),
      ]);
      return own + all;
    });
    const options = {
      ...jobs[name].options,
      jobId: payload.requestId,
      ...(priority !== undefined ? { priority: Math.min(Math.max(1, Math.round(priority)), MAX_PRIORITY) } : {}),
    };
    const added = this.redisCall(() => queue.add(name, payload, options));
    const [count, job] = await Promise.allSettled([counted, added]);
    if (job.status === "rejected") throw job.reason;
    const full = count.status === "rejected" || count.value >= this.options.maxQueueDepth;
    if (
      full &&
      (await queue.remove(job.value.id!).then(
        (n) => n === 1,
        () => false,
      ))
    ) {
      if (count.status === "rejected") throw count.reason;
      throw new AppError(
        "rate_limited",
        `Too many requests are queued for ${payload.model.name} (${count.value}); retry shortly.`,
        { param: null },
      );
    }
    return job.value;
  }

  /**
   * Once its lane's bound has passed, moves a placed or express job no worker has started from
   * `from` to the shared queue (same ID and priority), where any worker of the model takes it,
   * and tells `moved`; `failed` when it was taken out but could not be added back. A job that
   * has started (or ended) cannot be removed, and stays.
   */
  moveLater(
    job: Job,
    from: Queue,
    shared: Queue,
    lane: "placed" | "express",
    on: { moved(): void; failed(): void },
  ): NodeJS.Timeout {
    const waitMs =
      (lane === "placed" ? this.options.lanes?.placement?.waitMs : this.options.lanes?.express?.waitMs) ?? 0;
    return setTimeout(async () => {
      const removed = await from.remove(job.id!).then(
        (n) => n === 1,
        () => false,
      );
      if (!removed) return;
      try {
        await this.redisCall(() => shared.add(job.name, job.data, { ...job.opts, jobId: job.id! }));
        on.moved();
        const { baseModelId } = (job.data as InferencePayload).model;
        if (lane === "placed") this.options.observer?.moved?.(baseModelId);
        else this.options.observer?.expressMoved?.(baseModelId);
      } catch {
        on.failed();
      }
    }, waitMs);
  }

  private redisCall<T>(fn: () => Promise<T>): Promise<T> {
    return callRedis(this.redis, this.options.redisCommandTimeoutMs, fn);
  }
}

/** BullMQ's largest priority (2^21). */
const MAX_PRIORITY = 2_097_152;

/**
 * A batch's line queues with this more than an interactive request's priority (BullMQ: lower
 * runs first): every interactive request waiting runs before any line does. Lines never take
 * the express lane (their priority is never 1).
 */
export const BATCH_PRIORITY_OFFSET = 1_000_000;

/**
 * Whether a batch's line runs from the shared queue (a job in its active list with a batch's
 * priority) while nothing waits in the express lane. Batch lines may hold every sequence with
 * none waiting (a batch keeps a fixed number of lines in flight): a lone request in the shared
 * queue would then wait for a line to end, however long, where the lane starts it at once.
 * KEYS: the shared queue's active list, the lane's wait and paused lists and prioritized set;
 * ARGV: the shared queue's job key prefix, the lowest priority of a batch's line.
 */
const BATCH_HOLDS = `
if redis.call("LLEN", KEYS[2]) + redis.call("LLEN", KEYS[3]) + redis.call("ZCARD", KEYS[4]) > 0 then return 0 end
local lowest = tonumber(ARGV[2])
for _, id in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local priority = tonumber(redis.call("HGET", ARGV[1] .. id, "priority"))
  if priority and priority >= lowest then return 1 end
end
return 0`;

async function batchLinesRunAndLaneIdle(redis: RedisClient, shared: Queue, lane: Queue): Promise<boolean> {
  const keys = [shared.keys.active!, lane.keys.wait!, lane.keys.paused!, lane.keys.prioritized!];
  return (await redis.eval(BATCH_HOLDS, keys.length, ...keys, shared.toKey(""), BATCH_PRIORITY_OFFSET)) === 1;
}

/**
 * The jobs waiting for a worker (the wait and paused lists, and the prioritized set), as plain
 * commands: ioredis writes them to the connection before this returns, ahead of anything sent after.
 */
async function waitingCount(redis: RedisClient, queue: Queue): Promise<number> {
  const [wait, paused, prioritized] = await Promise.all([
    redis.llen(queue.keys.wait!),
    redis.llen(queue.keys.paused!),
    redis.zcard(queue.keys.prioritized!),
  ]);
  return wait + paused + prioritized;
}
