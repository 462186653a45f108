import type { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import { ReplyPublisher } from "../queues/reply-publisher.js";
import { LEASE_REFRESH_MS, LEASE_TTL_MS, leaseKey, publishEvent, type StreamEvent } from "../queues/stream.js";
import type { Cancellations } from "./cancellations.js";

export interface JobFinished<T = unknown> {
  requestId: string;
  /** What the work returned: an inference job's finish reasons and usage, an image job's image count. */
  outcome?: T;
  error?: AppError;
}

export interface StreamedJobDeps {
  /** This worker's ID, written in the leases it holds. */
  workerId: string;
  publisher: Redis;
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
 * `error` event, so the stream always ends. The job ends once its reply is out, so a
 * closing worker loses none of it.
 */
export async function runStreamedJob<T>(
  deps: StreamedJobDeps,
  payload: { requestId: string; replyTo: string },
  work: (signal: AbortSignal, emit: (event: StreamEvent) => void) => Promise<T>,
): Promise<T | undefined> {
  const { requestId } = payload;
  const reply = new ReplyPublisher((event) => publishEvent(deps.publisher, payload.replyTo, requestId, event));
  const emit = (event: StreamEvent) => reply.publish(event);
  const signal = deps.cancellations.start(requestId);
  const lease = await holdLease(deps, requestId);
  deps.events.emit("job-started", { requestId });
  try {
    const outcome = await work(signal, emit);
    deps.events.emit("job-finished", { requestId, outcome } satisfies JobFinished);
    return outcome;
  } catch (cause) {
    const error =
      cause instanceof AppError
        ? cause
        : new AppError("internal", `The worker could not run the request: ${(cause as Error)?.message ?? cause}`, {
            cause,
          });
    if (error.code === "internal") deps.log.error("job failed", { requestId, error: String(cause) });
    emit({ type: "error", error: error.toJSON() });
    deps.events.emit("job-finished", { requestId, error } satisfies JobFinished);
    return undefined;
  } finally {
    deps.cancellations.finish(requestId);
    await reply.drained();
    await lease.release();
  }
}

/** Takes the job's lease (stream.ts) before its first event, and keeps it until released. */
async function holdLease(deps: StreamedJobDeps, requestId: string): Promise<{ release(): Promise<void> }> {
  const key = leaseKey(deps.prefix, requestId);
  const renew = () => deps.publisher.set(key, deps.workerId, "PX", LEASE_TTL_MS);
  await renew().catch((err: unknown) =>
    deps.log.warn("could not take a job's lease", { requestId, error: String(err) }),
  );
  const timer = setInterval(() => {
    // A renewal Redis misses lets the lease lapse: the API then ends the request, which is right
    // when this worker cannot reach Redis (its events would not arrive either).
    renew().catch((err: unknown) => deps.log.debug("lease not renewed", { requestId, error: String(err) }));
  }, LEASE_REFRESH_MS);
  return {
    async release() {
      clearInterval(timer);
      await deps.publisher
        .del(key)
        .catch((err: unknown) => deps.log.debug("lease not released (it expires)", { requestId, error: String(err) }));
    },
  };
}
