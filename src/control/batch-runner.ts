import { claimBatch, releaseBatch, renewBatch } from "../db/queries/batches.js";
import type { BatchRow } from "../db/schema/batches.js";
import { BatchRun, type BatchRunDeps, type StopReason } from "./batch-run.js";

export interface BatchRunnerOptions {
  /** This process's name in the batches it holds. */
  runnerId: string;
  /** Lines of one batch in flight at once (HEARTH_BATCH_CONCURRENCY). */
  concurrency: number;
  /** Batches this process runs at once (HEARTH_BATCH_RUNS); 0: none. */
  maxBatches?: number;
  /**
   * How long a runner's hold on a batch lasts unless renewed (HEARTH_BATCH_LEASE_MS); a dead
   * runner's batch is taken over after it.
   */
  leaseMs?: number;
  /** How often a held batch's lease is renewed, and its cancel or expiry seen: by default a fifth of the lease, at most 2 s. */
  renewMs?: number;
  /** How often the runner looks for a batch to take. */
  pollMs?: number;
}

/**
 * The batch runner of an API process (docs/batch.md): it takes open batches nobody runs, each
 * under a lease in the database that it renews, and runs them (batch-run.ts); renewing, it sees a
 * cancel or the window's end, and stops the batch's lines. A process that dies lets its leases
 * lapse, and another runner takes its batches over where their results end. Several processes
 * run different batches, never one together.
 */
export class BatchRunner {
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  private closed = false;

  constructor(
    private readonly deps: BatchRunDeps,
    private readonly options: BatchRunnerOptions,
  ) {}

  start(): void {
    const { pollMs = 1_000, maxBatches = 2 } = this.options;
    if (maxBatches === 0) return;
    this.timer = setInterval(() => void this.look(), pollMs);
    this.timer.unref();
    void this.look();
  }

  /** Looks for a batch to take now (one was created in this process), besides every `pollMs`. */
  nudge(): void {
    if (this.timer) void this.look();
  }

  /** Stops every batch's lines and gives the batches back at once, for another runner to go on. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const { stop } of this.running.values()) stop.abort("stop" satisfies StopReason);
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** Takes open batches while it runs fewer than it may. */
  private async look(): Promise<void> {
    if (this.looking || this.closed) return;
    this.looking = true;
    const { runnerId, maxBatches = 2, leaseMs = 30_000 } = this.options;
    try {
      while (!this.closed && this.running.size < maxBatches) {
        const batch = await claimBatch(this.deps.db, runnerId, leaseMs);
        if (!batch) break;
        this.runHeld(batch);
      }
    } catch (error) {
      this.deps.log.warn("could not look for batches to run", { error: String(error) });
    } finally {
      this.looking = false;
    }
  }

  private runHeld(batch: BatchRow): void {
    const { runnerId, concurrency, leaseMs = 30_000 } = this.options;
    const renewMs = this.options.renewMs ?? Math.min(2_000, Math.floor(leaseMs / 5));
    const { db, log } = this.deps;
    const stop = new AbortController();
    let held = true;
    const renew = setInterval(async () => {
      try {
        const now = await renewBatch(db, batch.id, runnerId, leaseMs);
        if (!now) {
          held = false;
          stop.abort("stop" satisfies StopReason);
        } else if (now.status === "cancelling") stop.abort("cancel" satisfies StopReason);
        else if (now.expiresAt.getTime() <= Date.now()) stop.abort("expire" satisfies StopReason);
      } catch (error) {
        log.warn("could not renew a batch's lease", { batchId: batch.id, error: String(error) });
      }
    }, renewMs);
    const done = new BatchRun(this.deps, batch, runnerId, concurrency)
      .run(stop.signal)
      .catch((error: unknown) => {
        // Kept until its lease lapses: taken again at once, a failing batch would spin.
        held = false;
        log.error("a batch's run failed; it is taken again once its lease lapses", {
          batchId: batch.id,
          error: String(error),
        });
      })
      .finally(async () => {
        clearInterval(renew);
        this.running.delete(batch.id);
        if (held) await releaseBatch(db, batch.id, runnerId).catch(() => undefined);
        if (!this.closed) void this.look();
      });
    this.running.set(batch.id, { stop, done });
  }
}
