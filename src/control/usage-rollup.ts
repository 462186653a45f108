import type { Db } from "../db/client.js";
import { rollUpUsage, type RollUpResult } from "../db/queries/usage-rollup.js";
import type { Logger } from "../logger.js";
import { withTimeout } from "../process/with-timeout.js";

export interface UsageRollupOptions {
  /** Records that ended more than this many days ago are rolled up (HEARTH_USAGE_RETENTION_DAYS). */
  retentionDays: number;
  /** How often a pass runs. */
  intervalMs?: number;
  now?: () => number;
}

const DAY_MS = 86_400_000;

/**
 * Rolls up the usage records past their retention into daily totals (db/queries/usage-rollup.ts),
 * once at start and then every hour, in each API process: the roll-up is safe to run from
 * several at once, so none is elected. A pass that fails (the database away) is logged, and the
 * next one tries again.
 */
export class UsageRollup {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<RollUpResult | undefined> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: UsageRollupOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
    void this.pass();
  }

  /** One pass (a pass already running is joined); undefined when it failed or the rollup is closed. */
  pass(): Promise<RollUpResult | undefined> {
    if (this.stopping.signal.aborted) return Promise.resolve(undefined);
    this.running ??= this.rollUp().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops between two days; a day in flight is given `graceMs` to commit (or roll back) on its own. */
  async close(graceMs = 2_000): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    if (this.running) {
      await withTimeout(this.running, graceMs).catch(() =>
        this.log.warn("the usage roll-up closed with a day in flight; the next start goes on with it"),
      );
    }
  }

  private async rollUp(): Promise<RollUpResult | undefined> {
    const { retentionDays, now = Date.now } = this.options;
    try {
      const result = await rollUpUsage(this.db, new Date(now() - retentionDays * DAY_MS), this.stopping.signal);
      if (result.records > 0) this.log.info("rolled up usage records into daily totals", { ...result });
      return result;
    } catch (error) {
      if (this.stopping.signal.aborted) return undefined;
      this.log.warn("rolling up usage records failed; the next pass tries again", { error: String(error) });
      return undefined;
    }
  }
}
