import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** How a request the API ran through a worker ended. */
export type RequestOutcome = "completed" | "failed" | "cancelled";

/**
 * The API process's metrics (docs/operations.md, "Metrics"). Workers report theirs through
 * Redis (worker-metrics.ts); `GET /metrics` serves both, aggregated.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: "hearth_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: "hearth_http_request_duration_seconds",
    help: "Time to the HTTP answer's headers (a stream's first event), by method and route pattern.",
    labelNames: ["method", "route"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly timeToFirstToken = new Histogram({
    name: "hearth_time_to_first_token_seconds",
    help: "From a generation request's arrival at the queue to its first token, by model.",
    labelNames: ["model"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly tokensPerSecond = new Histogram({
    name: "hearth_generation_tokens_per_second",
    help: "Completion tokens per second of a request, from its first token to its end, by model.",
    labelNames: ["model"],
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers: [this.registry],
  });
  readonly queueWait = new Histogram({
    name: "hearth_queue_wait_seconds",
    help: "From a request's enqueueing to a worker taking it, by queue.",
    labelNames: ["queue"],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: "hearth_requests_total",
    help: "Requests run through the queues, by job kind and outcome (completed, failed, cancelled).",
    labelNames: ["kind", "outcome"],
    registers: [this.registry],
  });
  readonly modelRequests = new Gauge({
    name: "hearth_model_requests",
    help: "Requests per model (base, adapter or image model) now, by state: waiting for a worker, or running (as vLLM's lora_requests_info).",
    labelNames: ["model", "state"],
    registers: [this.registry],
  });
  readonly placements = new Counter({
    name: "hearth_placements_total",
    help:
      "Requests placement chose a queue for (adapters' and long prompts'), by base model and reason: prefix (a worker " +
      "holding the prompt's prefix), warm, assigned, least-loaded, spilled; shared (an adapter's request left to the shared queue).",
    labelNames: ["model", "reason"],
    registers: [this.registry],
  });
  readonly usageRequests = new Counter({
    name: "hearth_usage_requests_total",
    help: "Requests whose usage records this API process wrote (each record once across the fleet), by model and outcome.",
    labelNames: ["model", "outcome"],
    registers: [this.registry],
  });
  readonly usageTokens = new Counter({
    name: "hearth_usage_tokens_total",
    help: "Tokens of the usage records this API process wrote, by model and type: prompt (cached ones included), cached, completion.",
    labelNames: ["model", "type"],
    registers: [this.registry],
  });
  readonly usageImages = new Counter({
    name: "hearth_usage_images_total",
    help: "Images of the usage records this API process wrote, by model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly usageWriteRecords = new Histogram({
    name: "hearth_usage_write_records",
    help: "Usage records each database write of this API process's meter added (its batching: the count is the writes).",
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
    registers: [this.registry],
  });
  readonly usageWriteDelay = new Histogram({
    name: "hearth_usage_write_delay_seconds",
    help: "From a request's end to its usage record's write by this API process's meter (how far reports lag).",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly placementMoves = new Counter({
    name: "hearth_placement_moves_total",
    help: "Placed requests their worker had not started within HEARTH_PLACEMENT_WAIT_MS, moved to the shared queue (by base model).",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly expressRequests = new Counter({
    name: "hearth_express_requests_total",
    help: "Base model requests of accounts with nothing else in flight sent to the express lane while the shared queue had a backlog or a batch's lines ran from it (by base model; moved: not started within HEARTH_EXPRESS_WAIT_MS, moved to the shared queue).",
    labelNames: ["model", "outcome"],
    registers: [this.registry],
  });
  readonly queueJobs = new Gauge({
    name: "hearth_queue_jobs",
    help: "Jobs in each queue by state (waiting, active, delayed, failed), read at each scrape.",
    labelNames: ["queue", "state"],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "hearth_api_" });
  }
}
