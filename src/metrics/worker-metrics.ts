import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

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

  readonly decodeBatchTokens = new Histogram({
    name: "hearth_worker_decode_batch_tokens",
    help: "Tokens per llama.cpp decode, by base model: concurrent requests sharing their decodes show as batches of many.",
    labelNames: ["model"],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });
  readonly decodeStepSequences = new Histogram({
    name: "hearth_worker_decode_step_sequences",
    help: "Sequences per generation step (a decode of one token per sequence), by base model.",
    labelNames: ["model"],
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  readonly decodeStepPasses = new Histogram({
    name: "hearth_worker_decode_step_passes",
    help:
      "Passes llama.cpp made over a generation step, each reading all the weights, by base model: 1 when the " +
      "step's sequence IDs run on consecutively.",
    labelNames: ["model"],
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  readonly decodeStep = new Histogram({
    name: "hearth_worker_decode_step_seconds",
    help: "Time of one generation step (a decode of one token per sequence), by base model.",
    labelNames: ["model"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly stepBetween = new Histogram({
    name: "hearth_worker_step_between_seconds",
    help: "Time between two generation steps of a context, by base model and part: before_sampling (the decode's end to its first sampling), sampling (first asked to last answered), after_sampling (to the next decode: the generation loops and the requests' events).",
    labelNames: ["model", "part"],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [this.registry],
  });
  readonly decodeSlowdown = new Gauge({
    name: "hearth_worker_decode_slowdown_ratio",
    help: "The latest window of generation steps' median time ÷ the best median seen for that batch size, by base model: far above 1, llama.cpp's threads are waiting for the CPU.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly oversubscribed = new Gauge({
    name: "hearth_worker_cpu_oversubscribed",
    help: "1 while generation steps run at least 3 times slower than the model's own figure (threads waiting for the CPU), by base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });

  readonly promptCacheLookups = new Counter({
    name: "hearth_worker_prompt_cache_lookups_total",
    help: "Requests that took a sequence, by base model; with _hits_total, the prompt cache's hit rate.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly promptCacheHits = new Counter({
    name: "hearth_worker_prompt_cache_hits_total",
    help: "Requests that reused cells an earlier request left (cached prompt tokens), by base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly promptCacheTokens = new Counter({
    name: "hearth_worker_prompt_cache_tokens_total",
    help: "Prompt tokens not evaluated again, their cells reused from an earlier request, by base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly promptCacheEvicted = new Counter({
    name: "hearth_worker_prompt_cache_evicted_tokens_total",
    help: "Cached cells erased for another prompt or to keep HEARTH_PROMPT_CACHE_TOKENS, by base model.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly promptCacheBytes = new Gauge({
    name: "hearth_worker_prompt_cache_bytes",
    help: "Bytes of KV cache that idle sequences keep for later prompts, by base model (within the KV cache every sequence reserves).",
    labelNames: ["model"],
    registers: [this.registry],
  });

  constructor(workerId: string) {
    this.registry.setDefaultLabels({ worker: workerId });
    collectDefaultMetrics({ register: this.registry, prefix: "hearth_worker_" });
  }
}

/** Where a worker's metrics wait for the API (as prom-client's JSON), for `ttlMs`. */
export const workerMetricsKey = (prefix: string, workerId: string) => `${prefix}:metrics:${workerId}`;
