import type { Config } from "../config.js";
import type { Queue } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import { LeaseChecks } from "./lease-checks.js";
import type { EventInbox } from "./reply-hub.js";
import { LEASE_CHECK_MS, LEASE_TTL_MS, leaseKey } from "./stream.js";

/** A request the API follows: its job's ID and queue (which may change: a placed job moves), and where its events go. */
export interface FollowedJob {
  requestId: string;
  queue: Queue;
  inbox: EventInbox;
}

/** What the follower has seen of the request's events so far; `onStarted` is told once a worker is seen on it. */
export interface JobProgress {
  events: number;
  lastEventAt: number;
  onStarted(): void;
  /** Set when the request ended because its worker died after it began (its lease gone). */
  workerLost?: boolean;
}

export type JobLivenessOptions = Pick<
  Config,
  "redisPrefix" | "queueTimeoutMs" | "firstTokenTimeoutMs" | "interTokenTimeoutMs"
>;

const WAITING_STATES = new Set(["waiting", "prioritized", "delayed", "waiting-children"]);

/** The key of BullMQ's lock on a job, there from the moment a worker moves the job to active until it ends it. */
const jobLockKey = (queue: Queue, jobId: string) => queue.toKey(`${jobId}:lock`);

/**
 * How an API process knows that the jobs of the requests it follows are still going, and
 * ends a request (an `unavailable` error event in its inbox) when its job will not answer: no
 * worker took it in time, its worker died (before or after taking the job's lease), or its
 * worker went quiet for longer than the event timeouts. docs/reliability.md has the bounds.
 */
export class JobLiveness {
  /** The leases (and locks) of the requests this process follows, checked together every LEASE_CHECK_MS. */
  private readonly checks: LeaseChecks;

  constructor(
    redis: RedisClient,
    private readonly options: JobLivenessOptions,
  ) {
    this.checks = new LeaseChecks(redis, LEASE_CHECK_MS);
  }

  /**
   * Called when no event arrived within the queue timeout. Fails the request if no worker has
   * taken it or the worker that took it is gone; true while a worker is still on it.
   */
  async stillPending({ requestId: jobId, queue, inbox }: FollowedJob): Promise<boolean> {
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
   * Watches the request from the side: the lease of the worker running it (stream.ts), and
   * the time since its last event. A lease that is gone once it was seen, or once an event
   * came (a worker holds it from before its first event to after its last: this is how a
   * resumed request finds its worker dead), means that worker died; it must be missing twice
   * in a row, since the last event and the lease's release race each other to this process. A
   * worker that holds its lease but sends nothing for longer than the event timeouts is stuck.
   * Either way the request ends now with an error, whatever it has already sent.
   *
   * Before its lease, the request's job is waiting (the queue timeout's business) or a worker
   * has just taken it: BullMQ moved it to active under the worker's lock, and the worker takes
   * the lease as its very next step. A worker killed between the two leaves the job active,
   * locked for 30 s and then failed by BullMQ's stalled-job check, if a consumer of its queue
   * is left to run one. So while no lease has been seen, the job's lock is read too: one held
   * for longer than a lease's TTL with no lease taken is a worker that died taking the job.
   * Returns the function that stops watching.
   */
  watch(f: FollowedJob, progress: JobProgress): () => void {
    const { requestId, inbox } = f;
    const lease = leaseKey(this.options.redisPrefix, requestId);
    let leaseSeenAt: number | undefined;
    let lockedSince: number | undefined;
    let missing = 0;
    const starting = () => leaseSeenAt === undefined && progress.events === 0;
    const fail = (message: string) => {
      stop();
      inbox.push({ type: "error", error: { code: "unavailable", message, param: null } });
    };
    // A check that fails (Redis slow or away) decides nothing; the next one, or losing Redis, will.
    const stop = this.checks.watch(
      // The job's queue is read each time: a placed or express job may have moved to the shared queue.
      () => (starting() ? [lease, jobLockKey(f.queue, requestId)] : [lease]),
      ([held, locked]) => {
        const now = Date.now();
        if (held === 1) {
          leaseSeenAt ??= now;
          missing = 0;
          progress.onStarted();
        } else if (held === 0 && !starting() && ++missing >= 2) {
          progress.workerLost = true;
          return fail("The worker running this request stopped; please retry.");
        } else if (held === 0 && starting() && locked !== undefined) {
          lockedSince = locked === 1 ? (lockedSince ?? now) : undefined;
          if (lockedSince !== undefined && now - lockedSince > LEASE_TTL_MS) {
            return fail("The worker that took this request stopped before it started; please retry.");
          }
        }
        if (leaseSeenAt === undefined) return;
        const first = progress.events === 0;
        const limit = first ? this.options.firstTokenTimeoutMs : this.options.interTokenTimeoutMs;
        if (now - Math.max(leaseSeenAt, progress.lastEventAt) > limit) {
          fail(
            first
              ? `The worker sent nothing for ${limit} ms after it started the request; please retry.`
              : `The worker sent nothing for ${limit} ms in the middle of the answer; please retry.`,
          );
        }
      },
    );
    return stop;
  }
}
