import type { Queue } from "bullmq";
import { listDeployments } from "../db/queries/deployments.js";
import { modelName } from "../domain/model-name.js";
import type { LifecycleQueue } from "../jobs/lifecycle-queue.js";
import { sweepWorkerQueues } from "../jobs/worker-queue-sweep.js";
import { ownPrefix } from "../redis/prefix-owner.js";
import type { ControlDeps } from "./control-deps.js";

export interface ReconcilerOptions {
  /** How often a pass runs (HEARTH_RECONCILE_INTERVAL_MS). */
  intervalMs: number;
  /** A transition this long unchanged, with no job for it, is re-queued (HEARTH_RECONCILE_AFTER_MS). */
  afterMs: number;
}

const PENDING = ["waiting", "active", "delayed", "prioritized", "paused"] as const;

/**
 * The database, not Redis, is the source of truth for deployments. A deploy or undeploy job
 * can be lost with Redis (a restart without persistence, a FLUSHALL), leaving its model
 * DEPLOYING or UNDEPLOYING for good. Each pass finds the transitions that have not moved for
 * `afterMs` and have no job waiting, running or backing off, and queues their job again.
 * The handlers are idempotent, so a job that was merely slow, or a pass run by every API
 * process at once, does no harm. Each pass also removes the own queues of workers that are gone
 * (worker-queue-sweep.ts). A pass starts by claiming the Redis prefix again (a Redis that lost
 * it, e.g. to a FLUSHALL, gets it back) and does nothing under a prefix another Hearth now owns.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly deps: ControlDeps,
    private readonly queue: LifecycleQueue,
    private readonly options: ReconcilerOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.options.intervalMs);
    this.timer.unref();
    void this.pass();
  }

  /** One pass; resolves to the number of jobs re-queued (a pass already running is joined). */
  pass(): Promise<number> {
    this.running ??= this.reconcile()
      .catch((err: unknown) => {
        // The database or Redis is away: the next pass tries again.
        this.deps.log.warn("reconciling deployments failed", { error: String(err) });
        return 0;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async reconcile(): Promise<number> {
    const { redis, redisPrefix, prefixOwner } = this.deps;
    await ownPrefix(redis, redisPrefix, prefixOwner);
    const swept = await sweepWorkerQueues(redis, redisPrefix, prefixOwner).catch((err: unknown) => {
      this.deps.log.warn("removing the queues of workers that are gone failed", { error: String(err) });
      return [];
    });
    if (swept.length > 0) this.deps.log.info("removed the queues of workers that are gone", { queues: swept });
    const stale = Date.now() - this.options.afterMs;
    const stuck = (await listDeployments(this.deps.db, { states: ["DEPLOYING", "UNDEPLOYING"] })).filter(
      (d) => d.updatedAt.getTime() <= stale,
    );
    if (stuck.length === 0) return 0;
    const pending = await pendingJobs(this.queue.queue());
    let requeued = 0;
    for (const d of stuck) {
      const kind = d.state === "DEPLOYING" ? "deploy" : "undeploy";
      if (pending.has(`${kind} ${d.accountId} ${d.modelId}`)) continue;
      await this.queue.enqueue(kind, { accountId: d.accountId, modelId: d.modelId });
      requeued++;
      this.deps.log.warn(`re-queued the ${kind} of a model whose job was gone`, {
        model: modelName(d.accountId, d.modelId),
        since: d.updatedAt.toISOString(),
      });
    }
    return requeued;
  }
}

/** "kind account model" of every lifecycle job still to run. */
async function pendingJobs(queue: Queue): Promise<Set<string>> {
  const jobs = await queue.getJobs([...PENDING]);
  const data = jobs.flatMap((job) =>
    job ? [{ name: job.name, data: job.data as { accountId?: string; modelId?: string } }] : [],
  );
  return new Set(data.map((j) => `${j.name} ${j.data.accountId} ${j.data.modelId}`));
}
