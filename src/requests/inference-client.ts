import { randomUUID } from "node:crypto";
import type { Job } from "bullmq";
import { isCluster, type RedisClient } from "../redis/connection.js";
import { AppError } from "../errors.js";
import { type LogMeta, RequestLogs } from "./request-logs.js";
import { QueueLanes, type Chosen, type StreamedJob } from "./queue-lanes.js";
import { callRedis } from "../redis/redis-call.js";
import type { InferenceClientOptions } from "./inference-client-options.js";
import { jobs, type ImagePayload, type InferencePayload } from "../jobs/jobs.js";
import type { ProducerQueues } from "../jobs/producer-queues.js";
import type { UsageMeterTag } from "../domain/usage.js";
import type { ReplyHub } from "./reply-hub.js";
import { meteringOf } from "./relayed-usage.js";
import { type Following, RequestFollower } from "./request-follower.js";
import { routeKey, type SequencedEvent } from "./stream.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type InferenceRequest = DistributiveOmit<InferencePayload, "requestId" | "replyTo" | "logTtlMs">;
/** An image request; `requestId` is the caller's, since its uploaded images are already stored under it. */
export type ImageRequestPayload = Omit<ImagePayload, "replyTo" | "logTtlMs">;

/** How a job queues: its priority, and who is told once it is in its queue. */
export interface Queueing {
  /**
   * Its place among the queue's waiting jobs (BullMQ priority: lower runs first, equal ones in
   * order of arrival). Fair scheduling gives each account's request the number of requests that
   * account already has in flight, so a flooding account's requests wait behind others' (docs/security.md).
   */
  priority?: number;
  /** Called once the job is queued, or queueing it failed (the API's intake gate is left then). */
  onQueued?: () => void;
  /** Whose use the job is: its worker's usage record names them (docs/usage.md); absent, not metered. */
  meter?: UsageMeterTag;
}

export interface RunOptions extends Queueing {
  /** The request's ID (what the API returns as `x-request-id`); a new one when absent. */
  requestId?: string;
  /**
   * Keep the events so that `accountId` can resume the request on any API process; `view` is
   * whatever the resuming route needs to render them as the first response did.
   */
  resumable?: { accountId: string; view: unknown };
}

/** A request being resumed: the `view` it was started with, and all its events, from the first. */
export interface ResumedStream {
  view: unknown;
  events: AsyncGenerator<SequencedEvent, void, undefined>;
}

/**
 * The producer side of inference: enqueue a job, then yield its events from the
 * reply hub until `done` or `error`. A request no worker takes within the queue
 * timeout is withdrawn and fails with 503; an aborted request is withdrawn if
 * still queued and cancelled if running (a resumable one only once nobody has
 * resumed it within ORPHAN_GRACE_MS).
 */
export class InferenceClient {
  /** Follows each request's job until its end. */
  private readonly follower: RequestFollower;
  /** Which queue each job waits in, and its moves to the shared queue. */
  private readonly lanes: QueueLanes;
  /** Resumable requests' event logs. */
  private readonly logs: RequestLogs;

  constructor(
    private readonly redis: RedisClient,
    private readonly queues: ProducerQueues,
    private readonly hub: ReplyHub,
    private readonly options: InferenceClientOptions,
  ) {
    this.follower = new RequestFollower(redis, hub, options);
    this.lanes = new QueueLanes(redis, queues, options);
    this.logs = new RequestLogs(redis, options);
  }

  run(
    request: InferenceRequest,
    signal: AbortSignal,
    options: RunOptions = {},
  ): AsyncGenerator<SequencedEvent, void, undefined> {
    const requestId = options.requestId ?? randomUUID();
    const payload = { ...request, requestId, replyTo: this.hub.channel, ...meterOf(options) };
    return this.stream("inference", payload, signal, options.resumable, options);
  }

  /** An image job on its model's queue: `progress` events, then `done` with the images' keys. */
  runImage(
    request: ImageRequestPayload,
    signal: AbortSignal,
    queueing: Queueing = {},
  ): AsyncGenerator<SequencedEvent, void, undefined> {
    const payload = { ...request, replyTo: this.hub.channel, ...meterOf(queueing) };
    return this.stream("image", payload, signal, undefined, queueing);
  }

  /**
   * Resumes a resumable request started on any API process: its events so far from the log,
   * then the live rest (this process takes the request's route first, so nothing falls
   * between the two). Not found when the log is gone (expired) or is another account's.
   */
  async resume(requestId: string, accountId: string, signal: AbortSignal): Promise<ResumedStream> {
    const meta = await this.redisCall(() => this.logs.meta(requestId));
    if (!meta || meta.accountId !== accountId) {
      throw new AppError(
        "not_found",
        `There is no stream ${requestId} to resume: its events are kept ${this.options.streamRetentionMs / 1000} s after the last one.`,
        { param: "request_id" },
      );
    }
    const inbox = this.hub.inbox(requestId);
    let answered: boolean;
    try {
      const route = routeKey(this.options.redisPrefix, requestId);
      await this.redisCall(() => this.redis.set(route, this.hub.channel, "PX", this.options.streamRetentionMs));
      const logged = await this.redisCall(() => this.logs.events(requestId));
      answered = logged.some((e) => e.type === "done");
      inbox.prepend(logged);
    } catch (error) {
      inbox.close();
      throw error;
    }
    const following = {
      requestId,
      queue: this.queues.get(meta.queue),
      inbox,
      resumable: true,
      // A request answered before this resume was metered as it ended: nothing is left to this process.
      ...(meta.metering && !answered ? { metering: meta.metering } : {}),
    };
    return { view: meta.view, events: this.follower.follow(following, signal) };
  }

  private async *stream(
    name: StreamedJob,
    payload: InferencePayload | ImagePayload,
    signal: AbortSignal,
    resumable: RunOptions["resumable"],
    { priority, onQueued }: Queueing,
  ): AsyncGenerator<SequencedEvent, void, undefined> {
    const { requestId } = payload;
    const shared = this.queues.get(jobs[name].queueName(payload.model.baseModelId));
    const inbox = this.hub.inbox(requestId);
    const metering = meteringOf(payload);
    let job: Job;
    let chosen: Chosen;
    try {
      chosen = await this.lanes.choose(name, payload, shared, priority);
      // The log's meta entry must be in place before a worker can take the job and append to
      // it. On one Redis connection commands run in the order they are sent, so the log's start
      // and the add go out together (one round trip, not two); a Redis Cluster may hold the two
      // on different nodes, so there the log is started first.
      let logging: Promise<void> | undefined;
      if (resumable) {
        const meta: LogMeta = {
          accountId: resumable.accountId,
          queue: chosen.queue.name,
          view: resumable.view,
          ...(metering ? { metering } : {}),
        };
        logging = this.redisCall(() => this.logs.start(requestId, meta));
        if (isCluster(this.redis)) await logging;
      }
      const logTtlMs = resumable ? this.options.streamRetentionMs : 0;
      const express = chosen.lane === "express" ? { express: true as const } : {};
      const adding = this.lanes.add(chosen, shared, name, { ...payload, ...express, logTtlMs }, priority);
      const [logged, added] = await Promise.allSettled([logging, adding]);
      if (added.status === "rejected") throw added.reason;
      job = added.value;
      if (logged.status === "rejected") {
        // Not resumable as promised: the job is taken back (one a worker has already taken runs, unheard).
        await chosen.queue.remove(job.id!).catch(() => 0);
        throw logged.reason;
      }
    } catch (error) {
      inbox.close();
      throw error;
    } finally {
      onQueued?.();
    }
    const kind = name === "image" ? "image" : (payload as InferencePayload).kind;
    const observed = { model: payload.model.name, kind, queue: shared.name };
    const { queue, lane } = chosen;
    const following: Following = {
      requestId: job.id!,
      queue,
      inbox,
      resumable: resumable !== undefined,
      observed,
      ...(metering ? { metering } : {}),
    };
    const moving =
      lane === "shared"
        ? undefined
        : this.lanes.moveLater(job, queue, shared, lane, {
            moved: () => {
              following.queue = shared;
            },
            failed: () =>
              inbox.push({
                type: "error",
                error: {
                  code: "unavailable",
                  message: "The queue (Redis) is unavailable; please retry shortly.",
                  param: null,
                },
              }),
          });
    try {
      yield* this.follower.follow(following, signal);
    } finally {
      clearTimeout(moving);
    }
  }

  /** Runs a Redis command; a connection that is down or does not answer in time becomes a 503. */
  private redisCall<T>(fn: () => Promise<T>): Promise<T> {
    return callRedis(this.redis, this.options.redisCommandTimeoutMs, fn);
  }
}

const meterOf = ({ meter }: Queueing) => (meter ? { meter } : {});
