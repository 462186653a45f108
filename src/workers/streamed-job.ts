import type { EventEmitter } from "node:events";
import type { RedisClient } from "../redis/connection.js";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { EventBatcher } from "../requests/event-batcher.js";
import { ReplyPublisher, UNSTREAMED_HOLD_MS } from "../requests/reply-publisher.js";
import {
  LEASE_REFRESH_MS,
  leaseKey,
  ORPHAN_GRACE_MS,
  renewLease,
  sendEvent,
  takeLease,
  type ReplyAddress,
  type StreamEvent,
  isCutShort,
} from "../requests/stream.js";
import { cancelReason, type Cancellations } from "./cancellations.js";
import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import { appendUsageOrLog } from "../requests/usage-log.js";
import { JobUsage } from "./usage-report.js";

export interface JobFinished<T = unknown> {
  requestId: string;
  /** What the work returned: an inference job's finish reasons and usage, an image job's image count. */
  outcome?: T;
  error?: AppError;
}

export interface StreamedJobDeps {
  /** This worker's ID, written in the leases it holds. */
  workerId: string;
  publisher: RedisClient;
  /** Sends the jobs' events, those of several jobs together (on `publisher`). */
  sender: EventBatcher;
  /** Hearth's Redis prefix, for the job's lease. */
  prefix: string;
  cancellations: Cancellations;
  /** "job-started" ({requestId}) and "job-finished" (JobFinished), for tests and metrics. */
  events: EventEmitter;
  log: Logger;
}

/**
 * Runs a job whose events stream back to the API that waits for it (inference, images):
 * `work` gets the request's cancel signal and `emit`; whatever it throws becomes the
 * `error` event, so the stream always ends. Work cut short by a cancel ends with the
 * cancel's reason as its error event, never a `done` that would pass for complete. The job
 * ends once its reply is out, so a closing worker loses none of it.
 */
export async function runStreamedJob<T>(
  deps: StreamedJobDeps,
  payload: InferencePayload | ImagePayload,
  work: (signal: AbortSignal, emit: (event: StreamEvent) => void) => Promise<T>,
): Promise<T | undefined> {
  const { requestId } = payload;
  const startedAt = Date.now();
  const to: ReplyAddress = {
    prefix: deps.prefix,
    requestId,
    replyTo: payload.replyTo,
    logTtlMs: payload.logTtlMs ?? 0,
  };
  let seq = 0;
  const holdMs = "streamed" in payload && payload.streamed === false ? UNSTREAMED_HOLD_MS : 0;
  const usage = new JobUsage(payload);
  const reply = new ReplyPublisher(
    (event) => deps.sender.send(to, ++seq, event).then((receivers) => usage.published(event, receivers)),
    holdMs,
  );
  const signal = deps.cancellations.start(requestId);
  const emit = (event: StreamEvent) => {
    usage.emitted(event);
    reply.publish(
      signal.aborted && isCutShort(event) ? { type: "error", error: cancelReason(signal).toJSON() } : event,
    );
  };
  const lease = await holdLease(deps, to);
  deps.log.debug("job started", { requestId });
  deps.events.emit("job-started", { requestId });
  try {
    const outcome = await work(signal, emit);
    deps.log.debug("job finished", { requestId, cancelled: signal.aborted });
    deps.events.emit("job-finished", { requestId, outcome } satisfies JobFinished);
    return outcome;
  } catch (cause) {
    const error = signal.aborted
      ? cancelReason(signal)
      : cause instanceof AppError
        ? cause
        : new AppError("internal", `The worker could not run the request: ${(cause as Error)?.message ?? cause}`, {
            cause,
          });
    if (error.code === "internal" || error.detail !== undefined) {
      deps.log.error("job failed", {
        requestId,
        code: error.code,
        error: error.message,
        ...(error.detail !== undefined ? { detail: error.detail } : {}),
        ...(cause instanceof Error && cause.stack ? { stack: cause.stack } : {}),
      });
    }
    emit({ type: "error", error: forClient(error, requestId) });
    deps.events.emit("job-finished", { requestId, error } satisfies JobFinished);
    return undefined;
  } finally {
    deps.cancellations.finish(requestId);
    // Metered once its events are out: a failure counts what reached an API process.
    await reply.drained();
    deps.sender.finished(requestId);
    const ending = { cancelled: signal.aborted, orphaned: lease.orphaned, startedAt, endedAt: Date.now() };
    // A job tagged with whom to meter (by an API process with metering on) has its record appended.
    const record = usage.record(ending);
    if (record) await appendUsageOrLog(deps.publisher, deps.prefix, record, deps.log);
    await lease.release();
  }
}

/**
 * What of a job's error reaches its client: the code, and Hearth's own words for what the
 * client can act on. An internal failure's message (paths, storage keys, llama.cpp's text) and
 * any detail stay in the worker's log, under the request ID the client also has.
 */
/** A job the registry refuses still ends its request, if it says where to, so its caller does not wait in vain. */
export async function endMalformedJob(deps: StreamedJobDeps, job: { data?: unknown }): Promise<void> {
  const { replyTo, requestId, logTtlMs } = (job.data ?? {}) as Record<string, unknown>;
  if (typeof replyTo !== "string" || typeof requestId !== "string") return;
  const error = new AppError("internal", "The worker could not read the request (malformed job).");
  const to = {
    prefix: deps.prefix,
    requestId,
    replyTo,
    logTtlMs: typeof logTtlMs === "number" && logTtlMs > 0 ? logTtlMs : 0,
  };
  await sendEvent(deps.publisher, to, 1, { type: "error", error: error.toJSON() }).catch((err: unknown) =>
    deps.log.warn("could not end a malformed job's request", { requestId, error: String(err) }),
  );
}

export function forClient(error: AppError, requestId: string): ReturnType<AppError["toJSON"]> {
  if (error.code !== "internal") return error.toJSON();
  return {
    code: "internal",
    message: `The worker failed to run this request; the operator's logs have what happened, under request ID ${requestId}.`,
    param: null,
  };
}

/**
 * Takes the job's lease (stream.ts) before its first event, and keeps it until released.
 * Each renewal also counts the API processes listening on the request's route: nobody for
 * ORPHAN_GRACE_MS, and the job is cancelled (its requester is gone).
 */
async function holdLease(
  deps: StreamedJobDeps,
  to: ReplyAddress,
): Promise<{ release(): Promise<void>; readonly orphaned: boolean }> {
  const { requestId } = to;
  let unheardSince: number | undefined;
  let orphaned = false;
  const renew = async () => {
    const listeners = await renewLease(deps.publisher, to, deps.workerId);
    if (listeners > 0) unheardSince = undefined;
    else if (unheardSince === undefined) unheardSince = Date.now();
    else if (Date.now() - unheardSince >= ORPHAN_GRACE_MS) {
      deps.log.info("job orphaned: nobody listens on its route", { requestId });
      orphaned = true;
      deps.cancellations.cancel(requestId, orphanedError());
    }
  };
  await takeLease(deps.publisher, to, deps.workerId).catch((err: unknown) =>
    deps.log.warn("could not take a job's lease", { requestId, error: String(err) }),
  );
  const timer = setInterval(() => {
    // A renewal Redis misses lets the lease lapse: the API then ends the request, which is right
    // when this worker cannot reach Redis (its events would not arrive either).
    renew().catch((err: unknown) => deps.log.debug("lease not renewed", { requestId, error: String(err) }));
  }, LEASE_REFRESH_MS);
  return {
    get orphaned() {
      return orphaned;
    },
    /** Ends the lease. */
    async release() {
      clearInterval(timer);
      await deps.publisher
        .del(leaseKey(to.prefix, requestId))
        .catch((err: unknown) => deps.log.debug("lease not released (it expires)", { requestId, error: String(err) }));
    },
  };
}

const orphanedError = () =>
  new AppError(
    "unavailable",
    `Nobody read this request's events for ${ORPHAN_GRACE_MS} ms (its API process or client went away), so the worker stopped it.`,
  );
