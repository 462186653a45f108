import { collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * A worker's metrics, labelled with its ID. The worker has no HTTP port: it writes them to
 * Redis with each heartbeat (`publishWorkerMetrics`), and the API's `GET /metrics` serves them
 * with its own, so Prometheus scrapes the API processes only.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly adaptersLoaded = new Gauge({
    name: "hearth_worker_adapters_loaded",
    help: "LoRA adapters loaded (with a context) per worker and base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly runningRequests = new Gauge({
    name: "hearth_worker_running_requests",
    help: "Requests running per worker and base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly adapterLoad = new Histogram({
    name: "hearth_worker_adapter_load_seconds",
    help: "Time to load a LoRA adapter and create its context, by base model.",
    labelNames: ["model"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(workerId: string) {
    this.registry.setDefaultLabels({ worker: workerId });
    collectDefaultMetrics({ register: this.registry, prefix: "hearth_worker_" });
  }
}

/** Where a worker's metrics wait for the API (as prom-client's JSON), for `ttlMs`. */
export const workerMetricsKey = (prefix: string, workerId: string) => `${prefix}:metrics:${workerId}`;
