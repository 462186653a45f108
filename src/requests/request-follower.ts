import type { RedisClient } from "../redis/connection.js";
import { AppError } from "../errors.js";
import type { InferenceClientOptions } from "./inference-client-options.js";
import { JobLiveness, type FollowedJob, type JobProgress } from "./job-liveness.js";
import type { ReplyHub } from "./reply-hub.js";
import { RelayedUsage, type Metering } from "./relayed-usage.js";
import type { SequencedEvent } from "./stream.js";
import { Withdrawals } from "./withdrawals.js";

/** How one request is being followed: its queue and inbox, and whether a client may resume it. */
export interface Following extends FollowedJob {
  resumable: boolean;
  /** For the observer: the model's name, the job's kind and its model's (shared) queue; absent when resumed (already counted). */
  observed?: { model: string; kind: string; queue: string };
  /** Whom a request of text is metered to: the API appends its answer's record, or its record when its worker dies (relayed-usage.ts). */
  metering?: Metering;
}

/**
 * The API's side of a request's job once it is queued (inference-client.ts): its events, each
 * once, until its end; the checks that end it when its job will not answer (job-liveness.ts);
 * the usage records this process appends for it (relayed-usage.ts); and its withdrawal when
 * it ends unfinished.
 */
export class RequestFollower {
  /** Whether the jobs of the requests this process follows are still going. */
  private readonly liveness: JobLiveness;
  private readonly withdrawals: Withdrawals;

  constructor(
    private readonly redis: RedisClient,
    hub: ReplyHub,
    private readonly options: InferenceClientOptions,
  ) {
    this.liveness = new JobLiveness(redis, options);
    this.withdrawals = new Withdrawals(redis, hub, options.redisPrefix);
  }

  /**
   * Yields a request's events until `done` or `error`, each once (by `seq`), and ends it
   * early when its worker dies, when no worker takes it in time, or when its worker goes
   * quiet for longer than the event timeouts.
   */
  async *follow(f: Following, signal: AbortSignal): AsyncGenerator<SequencedEvent, void, undefined> {
    const { inbox } = f;
    const onAbort = () => inbox.close();
    signal.addEventListener("abort", onAbort, { once: true });
    const queuedAt = Date.now();
    const observer = f.observed ? this.options.observer : undefined;
    const model = f.observed?.model ?? "";
    let running = false;
    const relayed = new RelayedUsage(f.metering);
    const onStarted = () => {
      relayed.started();
      if (running) return;
      running = true;
      observer?.started(model, f.observed?.queue ?? f.queue.name, Date.now() - queuedAt);
    };
    const progress: JobProgress = { events: 0, lastEventAt: Date.now(), onStarted };
    let finished = false;
    let failed = false;
    let lastSeq = 0;
    let firstTokenAt: number | undefined;
    let generation: { completionTokens: number; ms: number } | undefined;
    /** The answer's usage record, appended as its done came (RelayedUsage.answered). */
    let appended: Promise<void> | undefined;
    observer?.waiting(model);
    // Until the first event, check every queue timeout that a worker has the job.
    let deadline: NodeJS.Timeout | undefined;
    const arm = () => {
      deadline = setTimeout(async () => {
        if ((await this.liveness.stillPending(f)) && progress.events === 0) arm();
      }, this.options.queueTimeoutMs);
    };
    arm();
    const stopWatching = this.liveness.watch(f, progress);
    try {
      for (;;) {
        const event = await inbox.next();
        if (event === undefined) {
          if (signal.aborted) return;
          throw new AppError("unavailable", inbox.closedBecause ?? "The server is shutting down; please retry.");
        }
        if (event.seq !== undefined) {
          if (event.seq <= lastSeq) continue; // read from the log and received live: already yielded
          lastSeq = event.seq;
        }
        if (progress.events++ === 0) clearTimeout(deadline);
        progress.lastEventAt = Date.now();
        onStarted();
        const generated = event.type === "token" || event.type === "tool_call" || event.type === "tool_arguments";
        if (generated && firstTokenAt === undefined) {
          firstTokenAt = Date.now();
          observer?.firstToken(model, firstTokenAt - queuedAt);
        }
        if (event.type === "done" && firstTokenAt !== undefined) {
          generation = { completionTokens: event.usage.completionTokens, ms: Date.now() - firstTokenAt };
        }
        if (event.type === "error") {
          failed = true;
          // The worker's own error ends its job; one of this side's (a timeout) leaves it to withdraw.
          finished = event.seq !== undefined;
          throw new AppError(event.error.code, event.error.message, { param: event.error.param });
        }
        if (event.type === "done") {
          finished = true;
          // Workers end work they cut short with an error event; a "cancelled" choice in a
          // `done` is still never passed on as complete.
          if (event.choices.some((c) => c.finishReason === "cancelled")) {
            throw new AppError("unavailable", "The worker stopped before the answer was complete; please retry.");
          }
        }
        relayed.relayed(event);
        // In the usage log before the request ends: the batch's result, or the client's answer, then implies its record.
        if (event.type === "done")
          appended = relayed.answered(event, this.redis, this.options.redisPrefix, this.options.log);
        yield event;
        if (finished) return;
      }
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const outcome = signal.aborted && !finished ? "cancelled" : failed || !finished ? "failed" : "completed";
      observer?.ended(model, f.observed?.kind ?? "", outcome, generation, running);
      clearTimeout(deadline);
      stopWatching();
      signal.removeEventListener("abort", onAbort);
      inbox.close();
      if (progress.workerLost) void relayed.workerDied(this.redis, this.options.redisPrefix, this.options.log);
      await appended;
      if (!finished) {
        if (f.resumable && signal.aborted) this.withdrawals.later(f);
        else await this.withdrawals.now(f);
      }
    }
  }
}
