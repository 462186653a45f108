import { announceWorker, type WorkerInfo } from "../jobs/worker-registry.js";
import type { Logger } from "../logger.js";
import { type WorkerMetrics, workerMetricsKey } from "../metrics/worker-metrics.js";
import type { RedisClient } from "../redis/connection.js";

const HEARTBEAT_MS = 2_000;
/** A worker whose last beat is older than this no longer counts (worker-registry.ts). */
const HEARTBEAT_TTL_MS = 10_000;

/**
 * A worker's heartbeat: every two seconds, what it serves (`snapshot`) goes to the worker
 * registry, where the API's placement, readiness and console read it, and its metrics go to
 * Redis beside it, where the API's `GET /metrics` adds them to its own.
 */
export class WorkerHeartbeat {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly metrics: WorkerMetrics,
    private readonly snapshot: () => WorkerInfo,
    private readonly log: Logger,
  ) {}

  /** Beats once now, then every two seconds. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async beat(): Promise<void> {
    const info = this.snapshot();
    for (const served of info.serving ?? []) {
      this.metrics.adaptersLoaded.labels(served.model).set(served.adapters);
      this.metrics.runningRequests.labels(served.model).set(served.requests);
    }
    // Redis away: the next beat, two seconds on, tries again; the debug lines are for tracing it.
    const metrics = JSON.stringify(await this.metrics.registry.getMetricsAsJSON());
    await this.redis
      .set(workerMetricsKey(this.prefix, info.id), metrics, "PX", HEARTBEAT_TTL_MS)
      .catch((err: unknown) => this.log.debug("metrics not sent", { worker: info.id, error: String(err) }));
    await announceWorker(this.redis, this.prefix, info, HEARTBEAT_TTL_MS).catch((err: unknown) =>
      this.log.debug("heartbeat not sent", { worker: info.id, error: String(err) }),
    );
  }
}
