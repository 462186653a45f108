import { fileURLToPath } from "node:url";
import { z } from "zod";
import { parseImageModels } from "./config/image-models.js";
import { DEFAULT_TEMPLATE_LIMITS } from "./config/template-limits.js";
import { GPU_CHOICES } from "./domain/gpu.js";
import { parseProxyTrust } from "./proxy-trust.js";

/**
 * Every environment variable Hearth reads: one spec each, with its schema, default and
 * description (config.ts loads them; `npm run config:docs` prints the README's table).
 */

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));

/** Storage backends by URL scheme (src/storage/open-blob-store.ts opens each). */
export const STORAGE_SCHEMES = ["file", "s3"] as const;
/** Where blobs live: a directory, or an S3 bucket and key prefix (the endpoint and region come from AWS_* variables). */
export type StorageLocation = { scheme: "file"; dir: string } | { scheme: "s3"; bucket: string; prefix: string };

const storageBackends = `the storage backends are ${STORAGE_SCHEMES.map((s) => `${s}://`).join(", ")}`;

/** HEARTH_STORAGE_URL, parsed here once: a StorageLocation, or a problem the config reports. */
function parseStorageUrl(text: string): StorageLocation | { problem: string } {
  if (!URL.canParse(text)) return { problem: `not a URL; ${storageBackends}` };
  const url = new URL(text);
  if (url.protocol === "s3:") return parseS3Url(url);
  if (url.protocol !== "file:") return { problem: storageBackends };
  // new URL reads file:relative and file:./x as file:///relative and file:///x: refuse, not guess.
  if (!/^file:\/\//i.test(text) || (url.host !== "" && url.host !== "localhost")) {
    return { problem: "a file URL names an absolute path on this machine: file:///abs/path" };
  }
  try {
    return { scheme: "file", dir: fileURLToPath(url) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/** s3://bucket/prefix: a bucket name as S3 allows it, and a key prefix of plain segments (or none). */
function parseS3Url(url: URL): StorageLocation | { problem: string } {
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    return {
      problem: "an S3 URL names its bucket first: s3://bucket/prefix (3-63 lower-case letters, digits, dots, hyphens)",
    };
  }
  if (url.username || url.password || url.port || url.search || url.hash) {
    return { problem: "an S3 URL has a bucket and a prefix only; credentials come from the AWS variables" };
  }
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  if (prefix !== "" && !prefix.split("/").every((s) => /^[A-Za-z0-9._-]+$/.test(s) && s !== "." && s !== "..")) {
    return { problem: "an S3 key prefix is made of plain path segments: s3://bucket/some/prefix" };
  }
  return { scheme: "s3", bucket, prefix };
}

const storageUrl = optionalString.transform((text, ctx) => {
  if (text === undefined) return undefined;
  const parsed = parseStorageUrl(text);
  if ("problem" in parsed) {
    ctx.addIssue({ code: "custom", message: parsed.problem });
    return z.NEVER;
  }
  return parsed;
});

const proxyTrust = z.string().transform((text, ctx) => {
  const parsed = parseProxyTrust(text);
  if ("problem" in parsed) {
    ctx.addIssue({ code: "custom", message: parsed.problem });
    return z.NEVER;
  }
  return parsed;
});

export interface VariableSpec {
  schema: z.ZodType;
  default?: string;
  description: string;
}

export const variables = {
  PORT: { schema: int(0, 65535), default: "8080", description: "Port the API listens on." },
  HOST: {
    schema: z.string().min(1),
    default: "127.0.0.1",
    description: "Address the API binds to; 0.0.0.0 to accept connections from other hosts.",
  },
  DATABASE_URL: {
    schema: optionalString.pipe(z.url().optional()),
    description: "PostgreSQL URL. Unset: an embedded PGlite database under the data directory.",
  },
  HEARTH_DB_CONNECT_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: "5000",
    description: "PostgreSQL: the longest wait for a new connection; then the request fails with 503.",
  },
  HEARTH_DB_STATEMENT_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "15000",
    description:
      "PostgreSQL: the longest a statement may run (the server's statement_timeout), and the longest Hearth waits for an answer from a server that stopped answering; then 503.",
  },
  REDIS_URL: {
    schema: optionalString.pipe(z.url().optional()),
    description:
      "Redis URL. Unset: redis://127.0.0.1:6379, and `npm start` starts a local redis-server if none answers there.",
  },
  HEARTH_REDIS_CLUSTER: {
    schema: bool,
    default: "false",
    description:
      "REDIS_URL names one node of a Redis Cluster: Hearth connects as a cluster client and finds the other nodes from it. Hearth's and BullMQ's keys carry hash tags, so that what one command uses lives in one slot (docs/operations.md).",
  },
  HEARTH_REDIS_PREFIX: {
    schema: z.string().regex(/^[A-Za-z0-9:_-]+$/),
    default: "hearth",
    description: "Prefix of every Redis key and channel Hearth uses (queues, streams, worker heartbeats).",
  },
  HEARTH_REDIS_COMMAND_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: "5000",
    description:
      "The longest the API waits for Redis to answer a command (enqueueing, the log of a stream) before the request fails with 503.",
  },
  HEARTH_DATA_DIR: {
    schema: z.string().min(1),
    default: "./data",
    description: "Where Hearth keeps its embedded database, uploaded files and the admin key.",
  },
  HEARTH_MODEL_DIR: {
    schema: optionalString,
    description: "Directory of base model GGUF files. Unset: <HEARTH_DATA_DIR>/models.",
  },
  HEARTH_STORAGE_DIR: {
    schema: optionalString,
    description:
      "Where uploaded adapter files and converted artifacts are stored; API and workers must share it. Unset: <HEARTH_DATA_DIR>/storage.",
  },
  HEARTH_STORAGE_URL: {
    schema: storageUrl,
    description:
      "The storage backend, as a URL: file:///abs/path for local files, or s3://bucket/prefix for an S3-compatible store (endpoint from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, region from AWS_REGION, credentials from the AWS SDK's usual chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or the instance's role). Set, it wins over HEARTH_STORAGE_DIR; unset: file://<HEARTH_STORAGE_DIR>.",
  },
  AWS_ENDPOINT_URL_S3: {
    schema: optionalString,
    description:
      "With an s3:// HEARTH_STORAGE_URL: the S3 endpoint of a store other than AWS (MinIO, Ceph, R2…), addressed path-style. Unset: AWS_ENDPOINT_URL, else AWS's own.",
  },
  AWS_ENDPOINT_URL: {
    schema: optionalString,
    description: "As AWS_ENDPOINT_URL_S3, for every AWS service (the S3 one wins).",
  },
  AWS_REGION: {
    schema: optionalString,
    description: "With an s3:// HEARTH_STORAGE_URL: the bucket's region. Unset: us-east-1.",
  },
  HEARTH_ARTIFACT_CACHE_MB: {
    schema: int(16, 1_048_576),
    default: "4096",
    description:
      "With a storage backend that has no local files (S3): the most a worker keeps of downloaded adapter artifacts in <HEARTH_DATA_DIR>/artifact-cache, by content hash; the least recently used go first.",
  },
  HEARTH_BUILD_DEMO_MODELS: {
    schema: bool,
    default: "true",
    description: "Build the demo models (hearth-tiny and its example LoRA) into the model directory when absent.",
  },
  HEARTH_ADMIN_KEY: {
    schema: optionalString.pipe(z.string().min(20).optional()),
    description:
      "The admin API key to create on first start (at least 20 characters). Unset: a random key is generated, printed once and written to <HEARTH_DATA_DIR>/admin-api-key.",
  },
  HEARTH_WORKER_CONCURRENCY: {
    schema: int(1, 64),
    default: "4",
    description: "Inference jobs one worker takes from each model's queue at once.",
  },
  HEARTH_SEQUENCES_PER_CONTEXT: {
    schema: int(1, 64),
    default: "4",
    description: "Requests one llama.cpp context evaluates together in a batch.",
  },
  HEARTH_ADAPTER_SEQUENCES: {
    schema: int(1, 64),
    default: "2",
    description:
      "Sequences of each adapter context. Every loaded LoRA adapter of a model shares its adapter contexts (each batch holds one adapter's requests), so requests to all adapters together beyond HEARTH_ADAPTER_CONTEXTS × this wait for a free sequence.",
  },
  HEARTH_ADAPTER_CONTEXTS: {
    schema: int(1, 16),
    default: "4",
    description:
      "llama.cpp contexts the LoRA adapters of a loaded model share, created on the first adapter's request. An adapter's requests go to a context already running that adapter, else to the least busy; each context switches its adapter between batches (a batch holds one adapter's requests), and they decode in parallel within the worker's threads. An adapter costs its weights only.",
  },
  HEARTH_EXPRESS_SEQUENCES: {
    schema: int(0, 16),
    default: "1",
    description:
      "Sequences of each base model's express context, the express lane's: while a model's queue has a backlog, the request of an account with nothing else in flight goes to the model's express queue, and a worker runs it at once on a context of its own, beside the busy ones, instead of waiting for a sequence and for their steps. The context costs its sequences' KV cache (HEARTH_CONTEXT_SIZE tokens each) and llama.cpp's compute buffers (12 MB in all for the bench's 135M-parameter model). 0: no express lane.",
  },
  HEARTH_EXPRESS_WAIT_MS: {
    schema: int(0, 60_000),
    default: "250",
    description:
      "The longest a request waits in the express queue (every sequence of the express contexts busy); not started by then, it moves to its model's shared queue, ahead of the requests of accounts with more in flight.",
  },
  HEARTH_CONTEXTS_PER_MODEL: {
    schema: int(1, 16),
    default: "1",
    description: "llama.cpp contexts per loaded model; requests go to the least busy one.",
  },
  HEARTH_WORKER_THREADS: {
    schema: int(0, 256),
    default: "0",
    description:
      "CPU threads per context; 0 means one fewer than the CPU cores this process may use, its affinity capped by its cgroup's CPU quota (at least 1): llama.cpp's threads spin while they wait, and a core left free keeps the worker's own event loop, the API and Redis from waiting behind them. Concurrent contexts (adapters) together still use every core.",
  },
  HEARTH_CONTEXT_SIZE: {
    schema: int(64, 1_048_576),
    default: "2048",
    description: "Tokens of context per sequence, capped at the model's own context length.",
  },
  HEARTH_QUEUE_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "30000",
    description: "A request no worker has taken within this time fails with 503.",
  },
  HEARTH_PLACEMENT: {
    schema: bool,
    default: "true",
    description:
      "Adapter-aware placement: an adapter's request goes to a worker that has the adapter loaded, or else to the least loaded worker of its base model, which loads it and keeps getting it (docs/architecture.md). false: every worker of a base model takes any of its requests.",
  },
  HEARTH_PLACEMENT_WAIT_MS: {
    schema: int(0, 60_000),
    default: "250",
    description:
      "The longest a request placed on one worker waits there; not started by then, it moves to its base model's shared queue, which any worker of that model takes. Placement adds no more queueing than this.",
  },
  HEARTH_FIRST_TOKEN_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "60000",
    description:
      "Once a worker has started a request, the longest wait for its first token (or image step, or embeddings) before it fails with 503.",
  },
  HEARTH_INTER_TOKEN_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "30000",
    description: "The longest wait between two tokens (or image steps) of a running request before it fails with 503.",
  },
  HEARTH_STREAM_RETENTION_MS: {
    schema: int(1_000, 86_400_000),
    default: "300000",
    description:
      "How long a streamed completion's events stay in Redis after its last one, for `GET /v1/streams/<request_id>` to resume it.",
  },
  HEARTH_MAX_QUEUE_DEPTH: {
    schema: int(1, 1_000_000),
    default: "256",
    description: "Waiting jobs per base model beyond which requests fail with 429.",
  },
  HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "1200",
    description:
      "Requests per minute one account may make (every /v1 request); an admin may set another for an account. 0: no limit.",
  },
  HEARTH_RATE_LIMIT_TOKENS_PER_MINUTE: {
    schema: int(0, 2_000_000_000),
    default: "1000000",
    description:
      "Tokens per minute one account may generate with, prompt and completion: counted at admission on the prompt's bytes plus max_tokens, corrected to the usage at the end. An admin may set another for an account. 0: no limit.",
  },
  HEARTH_KEY_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "600",
    description: "Requests per minute one API key may make, within its account's. 0: no limit.",
  },
  HEARTH_AUTH_FAILURES_PER_MINUTE: {
    schema: int(1, 100_000_000),
    default: "30",
    description:
      "Failed authentications per minute from one client address; past it, that address gets 429 before any key is checked.",
  },
  HEARTH_ACCOUNT_MAX_IN_FLIGHT: {
    schema: int(1, 1_000_000),
    default: "64",
    description:
      "Generation requests one account may have queued or running at once; more get 429. An admin may set another for an account.",
  },
  HEARTH_IN_FLIGHT_STALE_MS: {
    schema: int(1_000, 3_600_000),
    default: "30000",
    description:
      "How long a request counts against its account's HEARTH_ACCOUNT_MAX_IN_FLIGHT without its API process confirming it (each API process confirms its own every third of this): the requests of an API process that died stop counting within this time.",
  },
  HEARTH_INTAKE_PER_ACCOUNT: {
    schema: int(1, 100_000),
    default: "8",
    description:
      "Generation requests of one account that an API process takes in at once (reads, checks and queues); the account's others wait their turn, so that another account's request is not held behind a burst of one account's in the API's event loop.",
  },
  HEARTH_ACCOUNT_MAX_MODELS: {
    schema: int(1, 1_000_000_000),
    default: "100",
    description: "Models (adapters) one account may have; an admin may set another for an account.",
  },
  HEARTH_ACCOUNT_MAX_STORED_BYTES: {
    schema: int(1, Number.MAX_SAFE_INTEGER),
    default: String(50 * 1024 ** 3),
    description:
      "Bytes of uploaded files one account may store (50 GiB); an upload past it gets 413. An admin may set another for an account.",
  },
  HEARTH_CLI_TARBALL: {
    schema: optionalString,
    description:
      "The `hearth` CLI tarball (`npm pack` output) this server offers `hearth upgrade` at `/v1/cli/hearth.tgz`, with its sha512 in `/v1/version`. Unset: the server packs its own package on first request.",
  },
  HEARTH_SESSION_TTL_MS: {
    schema: int(60_000, 30 * 86_400_000),
    default: "43200000",
    description: "A web session ends this long after its last use (12 h); signing out ends it at once.",
  },
  HEARTH_TRUST_PROXY: {
    schema: proxyTrust,
    default: "false",
    description:
      "Which proxies in front of Hearth to believe about the client: false (none: the connection's address is the client's), a number of hops (true: 1, the immediate peer), or a comma list of addresses, CIDRs and loopback, linklocal, uniquelocal. The client address (for the failed-authentication and page limits) is the rightmost X-Forwarded-For entry that is not a trusted proxy; X-Forwarded-Proto (the session cookie's Secure flag) is believed when the immediate peer is trusted.",
  },
  HEARTH_PAGE_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "300",
    description:
      "Requests per minute to the web pages (sign-in and the operators' pages included) per session, or per client address when signed out; past it, a 429 page. 0: no limit.",
  },
  HEARTH_METRICS_TOKEN: {
    schema: optionalString.pipe(z.string().min(16, "must be at least 16 characters").optional()),
    description:
      "A token Prometheus may scrape `GET /metrics` with (`Authorization: Bearer …`); unset, only admin keys may. Never logged.",
  },
  HEARTH_AUTH_CACHE_TTL_MS: {
    schema: int(0, 600_000),
    default: "5000",
    description:
      "How long the API reuses a successful API-key check before asking the database again; a revoked key (`npm run admin -- revoke-key`) keeps working for at most this long. 0: check every request.",
  },
  HEARTH_MODEL_CACHE_TTL_MS: {
    schema: int(0, 600_000),
    default: "5000",
    description:
      "How long the API reuses what a model name resolved to. Deploys, undeploys, deletes and PATCHes through any API process take effect at once (the API processes tell each other over Redis); other changes to the database, and changes missed while Redis was unreachable, within this time. 0: resolve every request.",
  },
  HEARTH_GPU: {
    schema: z.enum(GPU_CHOICES, { message: `one of ${GPU_CHOICES.join(", ")}` }),
    default: "auto",
    description:
      "Which llama.cpp backend workers load: auto (the best this machine has, else the CPU), cuda, vulkan, metal (a named one that is missing stops the worker at start), or off (the CPU). /readyz and the worker's heartbeat say which each worker uses.",
  },
  HEARTH_GPU_LAYERS: {
    schema: z.union([z.enum(["auto", "max"]), z.coerce.number().int().min(0).max(10_000)], {
      message: "auto, max, or a number of layers",
    }),
    default: "auto",
    description: "Layers of each model put on the GPU: auto (as many as fit its memory), max (all), or a number.",
  },
  HEARTH_TEMPLATE_TIMEOUT_MS: {
    schema: int(10, 60_000),
    default: String(DEFAULT_TEMPLATE_LIMITS.timeoutMs),
    description:
      "The longest one rendering of a user's chat template (an adapter's conversationConfig or hearth.json) may take; then its thread is killed and the request fails with 400.",
  },
  HEARTH_TEMPLATE_MEMORY_MB: {
    schema: int(16, 4096),
    default: String(DEFAULT_TEMPLATE_LIMITS.memoryMb),
    description:
      "Heap, in MB, of each thread that renders users' chat templates; a template that needs more fails its request with 400.",
  },
  HEARTH_TEMPLATE_THREADS: {
    schema: int(1, 64),
    default: String(DEFAULT_TEMPLATE_LIMITS.threads),
    description:
      "Threads per process (API and worker) that render users' chat templates, none of them the main thread.",
  },
  HEARTH_TEMPLATE_QUARANTINE_MS: {
    schema: int(0, 86_400_000),
    default: String(DEFAULT_TEMPLATE_LIMITS.quarantineMs),
    description:
      "How long a chat template that went past its time or memory bound is refused at once (400), in every process; 0: never.",
  },
  HEARTH_MAX_BODY_BYTES: {
    schema: int(1024, 1 << 30),
    default: "4194304",
    description: "Largest JSON request body accepted; larger ones get 413.",
  },
  HEARTH_BODY_TIMEOUT_MS: {
    schema: int(100, 300_000),
    default: "10000",
    description:
      "How long a request's headers may take to arrive, and then its whole body (file uploads excepted: they stream under HEARTH_MAX_UPLOAD_BYTES); past it the request gets a 408 and its connection is closed. A generation request takes its account's intake place only once its body is in, so a slow body holds none. An image request's form carries up to HEARTH_MAX_IMAGE_BYTES: raise this for clients on slow links.",
  },
  HEARTH_MAX_UPLOAD_BYTES: {
    schema: int(1024, 2 ** 45),
    default: "2147483648",
    description: "Largest adapter file one upload may store; larger ones get 413.",
  },
  HEARTH_MAX_LORA_RANK: {
    schema: int(1, 4096),
    default: "64",
    description: "Highest LoRA rank an uploaded adapter may have.",
  },
  HEARTH_WORKER_MAX_ADAPTERS: {
    schema: int(1, 1024),
    default: "8",
    description:
      "LoRA adapters one worker keeps loaded per base model (their weights; they share the adapter contexts); the least recently used one is freed first.",
  },
  HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: {
    schema: int(1, 100_000),
    default: "64",
    description:
      "Adapter loads after which a worker re-creates its base model object, draining in-flight work first: a bound on what the native allocator keeps over many loads (a freed adapter's memory is reused, but not returned to the system).",
  },
  HEARTH_WORKER_ROLES: {
    schema: z
      .string()
      .transform((text) =>
        text
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(["text", "image"], { message: "the roles are text and image" })).min(1)),
    default: "text,image",
    description:
      "What a worker serves: text (the base models' inference queues), image (the image models of HEARTH_IMAGE_MODELS), or both.",
  },
  HEARTH_SERVE_MODELS: {
    schema: optionalString,
    description:
      "Comma-separated base model IDs a worker serves (file names without .gguf). Unset: every base model in the model directory.",
  },
  HEARTH_IMAGE_MODELS: {
    schema: z.string().transform((text, ctx) => {
      try {
        return parseImageModels(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
    default: "hearth-sketch=sketch",
    description:
      "Image models served, as id=backend pairs: sketch (the embedded procedural renderer) or a1111:<url> (a server speaking the AUTOMATIC1111 web API). Empty: none.",
  },
  HEARTH_MAX_IMAGE_BYTES: {
    schema: int(1024, 1 << 30),
    default: String(10 * 1024 * 1024),
    description: "Largest init or control image file an image request may upload; larger ones get 413.",
  },
  HEARTH_MAX_IMAGE_PIXELS: {
    schema: int(64 * 64, 1 << 28),
    default: String(4096 * 4096),
    description:
      "Most pixels (width × height) an uploaded image may declare; more is refused with 413 before it is decoded (decompression bombs).",
  },
  HEARTH_IMAGE_BACKEND_TIMEOUT_MS: {
    schema: int(1_000, 3_600_000),
    default: "300000",
    description: "How long a worker waits for an a1111 image server to answer one request before failing it with 503.",
  },
  HEARTH_WORKER_DRAIN_MS: {
    schema: int(0, 3_600_000),
    default: "30000",
    description:
      "On SIGTERM a worker takes no new job and lets the running ones finish for this long; then it cancels them, and their requests end with an error (never as complete).",
  },
  HEARTH_API_DRAIN_MS: {
    schema: int(0, 3_600_000),
    default: "30000",
    description:
      "On SIGTERM the API accepts no new connection and lets open requests (streams included) finish for this long, then closes them.",
  },
  HEARTH_RECONCILE_INTERVAL_MS: {
    schema: int(100, 3_600_000),
    default: "15000",
    description: "How often each API process looks for deploys and undeploys whose job was lost (e.g. with Redis).",
  },
  HEARTH_RECONCILE_AFTER_MS: {
    schema: int(0, 86_400_000),
    default: "30000",
    description:
      "A model DEPLOYING or UNDEPLOYING this long with no job queued for it gets its job queued again (the database is the source of truth).",
  },
  HEARTH_LOG_LEVEL: {
    schema: z.enum(["debug", "info", "warn", "error"]),
    default: "info",
    description: "Least severe log level printed.",
  },
} satisfies Record<string, VariableSpec>;
