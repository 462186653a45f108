import path from "node:path";
import type { z } from "zod";
import type { GpuChoice, GpuLayers } from "./domain/gpu.js";
import type { ProxyTrust } from "./proxy-trust.js";
import { contradictions } from "./config/contradictions.js";
import type { ImageModelSpec } from "./config/image-models.js";
import type { VariableSpec } from "./config/spec.js";
import type { StorageLocation } from "./config/storage-url.js";
import type { TemplateLimits } from "./config/template-limits.js";
import type { Prices } from "./config/prices.js";
import { variables } from "./config/variables.js";
import { derivedConcurrency } from "./config/worker-capacity.js";
import { usableCores } from "./process/usable-cores.js";

/**
 * Hearth's configuration: the only module that reads the environment. Each variable is
 * declared once, with its default and its one-line description, in its tier's file under
 * config/ (docs/configuration.md explains them); this reads them all, derives what is left
 * unset, reports every bad value and every contradiction at once, and freezes the result.
 */

type Variables = typeof variables;
type Raw = { [K in keyof Variables]: z.output<Variables[K]["schema"]> };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL's timeouts: for a new connection, and for a statement's answer. */
  readonly dbTimeouts: { connectMs: number; statementMs: number };
  readonly redisUrl: string;
  /** The longest a producer (the API) waits for Redis to answer a command. */
  readonly redisCommandTimeoutMs: number;
  /** True when REDIS_URL was not given, so a supervisor may start a local Redis. */
  readonly redisUrlDefaulted: boolean;
  /** REDIS_URL is a node of a Redis Cluster (HEARTH_REDIS_CLUSTER). */
  readonly redisCluster: boolean;
  readonly redisPrefix: string;
  readonly dataDir: string;
  readonly modelDir: string;
  /** Where uploaded files and converted adapters live (HEARTH_STORAGE_URL, else HEARTH_STORAGE_DIR). */
  readonly storage: StorageLocation;
  /** The S3 client's settings, used with an s3:// storage location. */
  readonly s3: { endpoint: string | undefined; region: string };
  /** Where a worker keeps downloaded artifacts (storage without local files), and how much. */
  readonly artifactCache: { dir: string; maxBytes: number };
  readonly buildDemoModels: boolean;
  readonly adminKey: string | undefined;
  readonly worker: {
    /** Jobs taken at once per queue: HEARTH_WORKER_CONCURRENCY, else derived (config/worker-capacity.ts). */
    readonly concurrency: number;
    readonly sequencesPerContext: number;
    readonly adapterSequences: number;
    readonly adapterContexts: number;
    readonly contextsPerModel: number;
    /** Sequences of each base model's express context (HEARTH_EXPRESS_SEQUENCES). */
    readonly expressSequences: number;
    readonly threads: number;
    readonly contextSize: number;
    /** HEARTH_PROMPT_CACHE_TOKENS: null, no bound but the sequences' own; 0, no prompt caching. */
    readonly promptCacheTokens: number | null;
    readonly serveModels: readonly string[] | undefined;
    readonly roles: readonly ("text" | "image")[];
    readonly maxAdapters: number;
    readonly adapterLoadsPerModel: number;
    /** HEARTH_GPU and HEARTH_GPU_LAYERS. */
    readonly gpu: GpuChoice;
    readonly gpuLayers: GpuLayers;
    /** HEARTH_GPU_CHECK: run a tiny model on the GPU in a child process before using CUDA. */
    readonly gpuCheck: boolean;
    /** HEARTH_NATIVE_SAMPLER: sample a step's sequences in one native call where the batch sampler is built. */
    readonly nativeSampler: boolean;
    /** HEARTH_CUDA_ARCHITECTURES: what `npm run build:cuda` compiles for; unset, the local GPUs'. */
    readonly cudaArchitectures: readonly string[] | undefined;
  };
  readonly images: {
    readonly models: readonly ImageModelSpec[];
    readonly backendTimeoutMs: number;
    readonly maxImageBytes: number;
    readonly maxInputPixels: number;
  };
  /** The token `GET /metrics` also accepts (HEARTH_METRICS_TOKEN). */
  readonly metricsToken: string | undefined;
  /** The web pages: how long a session lasts, and which proxies' X-Forwarded-* headers are believed. */
  readonly web: { readonly sessionTtlMs: number; readonly trustProxy: ProxyTrust };
  readonly reconcile: { readonly intervalMs: number; readonly afterMs: number };
  /** How long a SIGTERMed worker, and API, let running work finish. */
  readonly drain: { readonly workerMs: number; readonly apiMs: number };
  readonly maxUploadBytes: number;
  /**
   * Batches (docs/batch.md): the largest input file, the most lines, lines in flight per batch,
   * batches one API process runs at once, and how long its hold on one lasts unless renewed.
   */
  readonly batch: {
    readonly maxFileBytes: number;
    readonly maxLines: number;
    readonly concurrency: number;
    readonly runs: number;
    readonly leaseMs: number;
  };
  readonly maxLoraRank: number;
  readonly queueTimeoutMs: number;
  /** Adapter-aware placement (HEARTH_PLACEMENT) and the longest a placed request waits for its worker. */
  readonly placement: { readonly enabled: boolean; readonly waitMs: number };
  /** Fair scheduling's express lane at the API: on when workers keep sequences for it (HEARTH_EXPRESS_SEQUENCES > 0). */
  readonly express: { readonly enabled: boolean; readonly waitMs: number };
  readonly maxQueueDepth: number;
  readonly firstTokenTimeoutMs: number;
  readonly interTokenTimeoutMs: number;
  readonly streamRetentionMs: number;
  readonly authCacheTtlMs: number;
  readonly modelCacheTtlMs: number;
  readonly maxBodyBytes: number;
  /** HEARTH_BODY_TIMEOUT_MS: the longest a request's headers, then its body (uploads excepted), may take. */
  readonly bodyTimeoutMs: number;
  /**
   * Abuse limits (docs/security.md): the defaults of every account's limits (an admin may set
   * others per account), the per-key and per-address ones. 0 for a rate: no limit.
   */
  readonly limits: {
    readonly requestsPerMinute: number;
    readonly tokensPerMinute: number;
    readonly keyRequestsPerMinute: number;
    readonly authFailuresPerMinute: number;
    /** Web page requests per session, or per address when signed out. */
    readonly pageRequestsPerMinute: number;
    readonly maxInFlightRequests: number;
    /** How long an in-flight entry counts unconfirmed (limits/in-flight.ts). */
    readonly inFlightStaleMs: number;
    /** Generation requests of one account taken in at once by an API process (limits/intake-gate.ts). */
    readonly intakePerAccount: number;
    readonly maxModels: number;
    readonly maxStoredBytes: number;
  };
  /** HEARTH_CLI_TARBALL: the CLI tarball served to `hearth upgrade`; unset, the server packs its own. */
  readonly cliTarball: string | undefined;
  /** HEARTH_USAGE_METERING: workers append a usage record per request and API processes run the meter. */
  readonly usageMetering: boolean;
  /** HEARTH_PRICES: what the operator charges per model (usage reports show costs); null, counts only. */
  readonly prices: Prices | null;
  /** HEARTH_USAGE_RETENTION_DAYS: usage records older than this roll up into daily totals; null, kept forever. */
  readonly usageRetentionDays: number | null;
  /** The sandbox users' chat templates render in (src/templates). */
  readonly templates: TemplateLimits;
  readonly logLevel: "debug" | "info" | "warn" | "error";
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses an environment (process.env in the entry points; a plain object in tests). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(variables) as [string, VariableSpec][]) {
    const value = env[name] ?? spec.default;
    const parsed = spec.schema.safeParse(value);
    if (parsed.success) raw[name] = parsed.data;
    else problems.push(`${name}=${JSON.stringify(value)}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const r = raw as Raw;
  const capacity = {
    contextsPerModel: r.HEARTH_CONTEXTS_PER_MODEL,
    sequencesPerContext: r.HEARTH_SEQUENCES_PER_CONTEXT,
    adapterContexts: r.HEARTH_ADAPTER_CONTEXTS,
    adapterSequences: r.HEARTH_ADAPTER_SEQUENCES,
  };
  const contradicted = contradictions(
    {
      ...capacity,
      concurrency: r.HEARTH_WORKER_CONCURRENCY,
      maxAdapters: r.HEARTH_WORKER_MAX_ADAPTERS,
      adapterLoadsPerModel: r.HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL,
      expressSequences: r.HEARTH_EXPRESS_SEQUENCES,
      placement: r.HEARTH_PLACEMENT,
    },
    (name) => (env[name]?.trim() ?? "") !== "",
  );
  if (contradicted.length > 0) throw new ConfigError(contradicted);
  const dataDir = path.resolve(r.HEARTH_DATA_DIR);
  const serve = r.HEARTH_SERVE_MODELS?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return deepFreeze({
    port: r.PORT,
    host: r.HOST,
    databaseUrl: r.DATABASE_URL,
    dbTimeouts: { connectMs: r.HEARTH_DB_CONNECT_TIMEOUT_MS, statementMs: r.HEARTH_DB_STATEMENT_TIMEOUT_MS },
    redisUrl: r.REDIS_URL ?? "redis://127.0.0.1:6379",
    redisCommandTimeoutMs: r.HEARTH_REDIS_COMMAND_TIMEOUT_MS,
    redisUrlDefaulted: r.REDIS_URL === undefined,
    redisCluster: r.HEARTH_REDIS_CLUSTER,
    redisPrefix: r.HEARTH_REDIS_PREFIX,
    dataDir,
    modelDir: path.resolve(r.HEARTH_MODEL_DIR ?? path.join(dataDir, "models")),
    storage: r.HEARTH_STORAGE_URL ?? {
      scheme: "file",
      dir: path.resolve(r.HEARTH_STORAGE_DIR ?? path.join(dataDir, "storage")),
    },
    s3: { endpoint: r.AWS_ENDPOINT_URL_S3 ?? r.AWS_ENDPOINT_URL, region: r.AWS_REGION ?? "us-east-1" },
    artifactCache: { dir: path.join(dataDir, "artifact-cache"), maxBytes: r.HEARTH_ARTIFACT_CACHE_MB * 1024 * 1024 },
    buildDemoModels: r.HEARTH_BUILD_DEMO_MODELS,
    adminKey: r.HEARTH_ADMIN_KEY,
    worker: {
      concurrency: r.HEARTH_WORKER_CONCURRENCY ?? derivedConcurrency(capacity),
      sequencesPerContext: r.HEARTH_SEQUENCES_PER_CONTEXT,
      adapterSequences: r.HEARTH_ADAPTER_SEQUENCES,
      adapterContexts: r.HEARTH_ADAPTER_CONTEXTS,
      contextsPerModel: r.HEARTH_CONTEXTS_PER_MODEL,
      expressSequences: r.HEARTH_EXPRESS_SEQUENCES,
      // llama.cpp's own default is at least 4 threads, which on a 2-core machine is many times slower.
      threads: r.HEARTH_WORKER_THREADS || Math.max(1, usableCores() - 1),
      contextSize: r.HEARTH_CONTEXT_SIZE,
      promptCacheTokens: r.HEARTH_PROMPT_CACHE_TOKENS ?? null,
      serveModels: serve && serve.length > 0 ? serve : undefined,
      roles: r.HEARTH_WORKER_ROLES,
      maxAdapters: r.HEARTH_WORKER_MAX_ADAPTERS,
      adapterLoadsPerModel: r.HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL,
      gpu: r.HEARTH_GPU,
      gpuLayers: r.HEARTH_GPU_LAYERS,
      gpuCheck: r.HEARTH_GPU_CHECK,
      nativeSampler: r.HEARTH_NATIVE_SAMPLER,
      cudaArchitectures: r.HEARTH_CUDA_ARCHITECTURES?.architectures,
    },
    images: {
      models: r.HEARTH_IMAGE_MODELS,
      backendTimeoutMs: r.HEARTH_IMAGE_BACKEND_TIMEOUT_MS,
      maxImageBytes: r.HEARTH_MAX_IMAGE_BYTES,
      maxInputPixels: r.HEARTH_MAX_IMAGE_PIXELS,
    },
    metricsToken: r.HEARTH_METRICS_TOKEN,
    web: { sessionTtlMs: r.HEARTH_SESSION_TTL_MS, trustProxy: r.HEARTH_TRUST_PROXY },
    reconcile: { intervalMs: r.HEARTH_RECONCILE_INTERVAL_MS, afterMs: r.HEARTH_RECONCILE_AFTER_MS },
    drain: { workerMs: r.HEARTH_WORKER_DRAIN_MS, apiMs: r.HEARTH_API_DRAIN_MS },
    maxUploadBytes: r.HEARTH_MAX_UPLOAD_BYTES,
    batch: {
      maxFileBytes: r.HEARTH_MAX_BATCH_FILE_BYTES,
      maxLines: r.HEARTH_MAX_BATCH_LINES,
      concurrency: r.HEARTH_BATCH_CONCURRENCY,
      runs: r.HEARTH_BATCH_RUNS,
      leaseMs: r.HEARTH_BATCH_LEASE_MS,
    },
    maxLoraRank: r.HEARTH_MAX_LORA_RANK,
    queueTimeoutMs: r.HEARTH_QUEUE_TIMEOUT_MS,
    placement: { enabled: r.HEARTH_PLACEMENT, waitMs: r.HEARTH_PLACEMENT_WAIT_MS },
    express: { enabled: r.HEARTH_EXPRESS_SEQUENCES > 0, waitMs: r.HEARTH_EXPRESS_WAIT_MS },
    maxQueueDepth: r.HEARTH_MAX_QUEUE_DEPTH,
    firstTokenTimeoutMs: r.HEARTH_FIRST_TOKEN_TIMEOUT_MS,
    interTokenTimeoutMs: r.HEARTH_INTER_TOKEN_TIMEOUT_MS,
    streamRetentionMs: r.HEARTH_STREAM_RETENTION_MS,
    authCacheTtlMs: r.HEARTH_AUTH_CACHE_TTL_MS,
    modelCacheTtlMs: r.HEARTH_MODEL_CACHE_TTL_MS,
    maxBodyBytes: r.HEARTH_MAX_BODY_BYTES,
    bodyTimeoutMs: r.HEARTH_BODY_TIMEOUT_MS,
    limits: {
      requestsPerMinute: r.HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE,
      tokensPerMinute: r.HEARTH_RATE_LIMIT_TOKENS_PER_MINUTE,
      keyRequestsPerMinute: r.HEARTH_KEY_REQUESTS_PER_MINUTE,
      authFailuresPerMinute: r.HEARTH_AUTH_FAILURES_PER_MINUTE,
      pageRequestsPerMinute: r.HEARTH_PAGE_REQUESTS_PER_MINUTE,
      maxInFlightRequests: r.HEARTH_ACCOUNT_MAX_IN_FLIGHT,
      inFlightStaleMs: r.HEARTH_IN_FLIGHT_STALE_MS,
      intakePerAccount: r.HEARTH_INTAKE_PER_ACCOUNT,
      maxModels: r.HEARTH_ACCOUNT_MAX_MODELS,
      maxStoredBytes: r.HEARTH_ACCOUNT_MAX_STORED_BYTES,
    },
    cliTarball: r.HEARTH_CLI_TARBALL === undefined ? undefined : path.resolve(r.HEARTH_CLI_TARBALL),
    usageMetering: r.HEARTH_USAGE_METERING,
    prices: r.HEARTH_PRICES ?? null,
    usageRetentionDays: r.HEARTH_USAGE_RETENTION_DAYS === 0 ? null : r.HEARTH_USAGE_RETENTION_DAYS,
    templates: {
      threads: r.HEARTH_TEMPLATE_THREADS,
      timeoutMs: r.HEARTH_TEMPLATE_TIMEOUT_MS,
      memoryMb: r.HEARTH_TEMPLATE_MEMORY_MB,
      quarantineMs: r.HEARTH_TEMPLATE_QUARANTINE_MS,
    },
    logLevel: r.HEARTH_LOG_LEVEL,
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
