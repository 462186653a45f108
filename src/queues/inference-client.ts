import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { AppError } from "../errors.js";
import { withTimeout } from "../process/with-timeout.js";
import { jobs, type ImagePayload, type InferencePayload } from "./jobs.js";
import { queueUnavailable, type ProducerQueues } from "./producer-queues.js";
import type { ReplyHub } from "./reply-hub.js";
import { LEASE_CHECK_MS, leaseKey, publishCancel, type StreamEvent } from "./stream.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type InferenceRequest = DistributiveOmit<InferencePayload, "requestId" | "replyTo">;
/** An image request; `requestId` is the caller's, since its uploaded images are already stored under it. */
export type ImageRequestPayload = Omit<ImagePayload, "replyTo">;

type StreamedJob = "inference" | "image";

export interface InferenceClientOptions {
  prefix: string;
  queueTimeoutMs: number;
  maxQueueDepth: number;
}

const WAITING_STATES = new Set(["waiting", "prioritized", "delayed", "waiting-children"]);

/**
 * The producer side of inference: enqueue a job, then yield its events from the
 * reply hub until `done` or `error`. A request no worker takes within the queue
 * timeout is withdrawn and fails with 503; an aborted request is withdrawn if
 * still queued and cancelled if running.
 */
export class InferenceClient {
  constructor(
    private readonly redis: Redis,
    private readonly queues: ProducerQueues,
    private readonly hub: ReplyHub,
    private readonly options: InferenceClientOptions,
  ) {}

  run(request: InferenceRequest, signal: AbortSignal): AsyncGenerator<StreamEvent, void, undefined> {
    return this.stream("inference", { ...request, requestId: randomUUID(), replyTo: this.hub.channel }, signal);
  }

  /** An image job on its model's queue: `progress` events, then `done` with the images' keys. */
  runImage(request: ImageRequestPayload, signal: AbortSignal): AsyncGenerator<StreamEvent, void, undefined> {
    return this.stream("image", { ...request, replyTo: this.hub.channel }, signal);
  }

  private async *stream(
    name: StreamedJob,
    payload: InferencePayload | ImagePayload,
    signal: AbortSignal,
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const { requestId } = payload;
    const inbox = this.hub.inbox(requestId);
    let finished = false;
    const onAbort = () => inbox.close();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const queue = this.queues.get(jobs[name].queueName(payload.model.baseModelId));
      const job = await this.enqueue(queue, name, payload);
      // Until the first event, check every queue timeout that a worker has the job.
      let deadline: NodeJS.Timeout | undefined;
      const arm = () => {
        deadline = setTimeout(async () => {
          if ((await this.stillPending(job.id!, queue, inbox)) && first) arm();
        }, this.options.queueTimeoutMs);
      };
      let first = true;
      arm();
      const watchdog = this.watchLease(requestId, inbox);
      try {
        for (;;) {
          const event = await inbox.next();
          if (event === undefined) {
            if (signal.aborted) return;
            throw new AppError("unavailable", inbox.closedBecause ?? "The server is shutting down; please retry.");
          }
          if (first) {
            first = false;
            clearTimeout(deadline);
          }
          if (event.type === "error") {
            finished = true;
            throw new AppError(event.error.code, event.error.message, { param: event.error.param });
          }
          if (event.type === "done") {
            finished = true;
            // The caller is still here, so the worker cut the answer short itself (shutdown):
            // an honest ending is an error, never a "stop" over text that is not complete.
            if (event.choices.some((c) => c.finishReason === "cancelled")) {
              throw new AppError(
                "unavailable",
                "The worker stopped before the answer was complete (it is shutting down); please retry.",
              );
            }
          }
          yield event;
          if (finished) return;
        }
      } finally {
        clearTimeout(deadline);
        clearInterval(watchdog);
        if (!finished) await this.withdraw(job.id!, queue, requestId);
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      inbox.close();
    }
  }

  /**
   * Adds the job unless `maxQueueDepth` jobs already wait, in one round trip: the count
   * and the add go out together, the count first on the same connection (so it does not
   * include this job). When the queue was full (or the count failed) the job is taken
   * back and the request fails, with 429 (or 503); should a worker have taken it
   * meanwhile, it runs.
   */
  private async enqueue(queue: Queue, name: StreamedJob, payload: InferencePayload | ImagePayload): Promise<Job> {
    const counted = this.redisCall(() => waitingCount(this.redis, queue));
    const added = this.redisCall(() => queue.add(name, payload, { ...jobs[name].options, jobId: payload.requestId }));
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
   * Called when no event arrived in time. Fails the request if no worker has taken it
   * or the worker that took it is gone; true while a worker is still on it.
   */
  private async stillPending(jobId: string, queue: Queue, inbox: { push(e: StreamEvent): void }): Promise<boolean> {
    const state = await queue.getJobState(jobId).catch(() => "unknown");
    if (WAITING_STATES.has(state)) {
      const removed = await queue.remove(jobId).then(
        (n) => n === 1,
        () => false,
      );
      if (!removed) return true; // a worker took it meanwhile
      inbox.push({
        type: "error",
        error: {
          code: "unavailable",
          message: `No worker took the request within ${this.options.queueTimeoutMs} ms; is a worker serving this model running?`,
          param: null,
        },
      });
      return false;
    }
    if (state === "active") return true;
    inbox.push({
      type: "error",
      error: {
        code: "unavailable",
        message: `The worker running this request stopped (job ${state}); please retry.`,
        param: null,
      },
    });
    return false;
  }

  /**
   * Watches the lease of the worker running the request (stream.ts): once seen, a lease that
   * is gone means that worker died, and the request ends now with an error, whatever it has
   * already sent. A lease never seen is the queue timeout's business.
   */
  private watchLease(requestId: string, inbox: { push(e: StreamEvent): void }): NodeJS.Timeout {
    let seen = false;
    const key = leaseKey(this.options.prefix, requestId);
    const timer = setInterval(async () => {
      if (this.redis.status !== "ready") return; // losing Redis ends the request by itself (reply-hub.ts)
      // A check that fails (Redis slow or away) decides nothing; the next one, or losing Redis, will.
      const held = await this.redis.exists(key).catch(() => undefined);
      if (held === 1) seen = true;
      else if (held === 0 && seen) {
        clearInterval(timer);
        inbox.push({
          type: "error",
          error: {
            code: "unavailable",
            message: "The worker running this request stopped; please retry.",
            param: null,
          },
        });
      }
    }, LEASE_CHECK_MS);
    return timer;
  }

  /** The caller went away or the stream failed: take the job back or cancel it. */
  private async withdraw(jobId: string, queue: Queue, requestId: string) {
    const removed = await queue.remove(jobId).then(
      (n) => n === 1,
      () => false,
    );
    // With Redis unreachable the cancel cannot go out either; the request has already ended
    // for its caller, and the worker's job ends at max_tokens into a channel nobody reads.
    if (!removed) await publishCancel(this.redis, this.options.prefix, requestId).catch(() => {});
  }

  /** Runs a Redis command; a connection that is down or does not answer in time becomes a 503. */
  private async redisCall<T>(fn: () => Promise<T>): Promise<T> {
    if (this.redis.status !== "ready") throw queueUnavailable();
    try {
      return await withTimeout(fn(), REDIS_TIMEOUT_MS);
    } catch (cause) {
      if (cause instanceof AppError) throw cause;
      throw queueUnavailable(cause);
    }
  }
}

const REDIS_TIMEOUT_MS = 5_000;

/**
 * What `queue.getWaitingCount()` counts (the wait and paused lists), as plain commands:
 * ioredis writes them to the connection before this returns, ahead of anything sent after.
 */
async function waitingCount(redis: Redis, queue: Queue): Promise<number> {
  const [wait, paused] = await Promise.all([redis.llen(queue.keys.wait!), redis.llen(queue.keys.paused!)]);
  return wait + paused;
}
