import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.js";
import { deleteRedisKeys } from "../../src/redis/redis-keys.js";
import { HearthChild } from "./child-process.js";
import { createBenchDatabase, type BenchDatabase } from "./bench-database.js";

/** How each worker process is configured (HEARTH_WORKER_* and friends). */
export interface WorkerSettings {
  threads: number;
  /** Contexts of each base model (HEARTH_CONTEXTS_PER_MODEL), each of `sequences`. */
  contexts: number;
  sequences: number;
  adapterSequences: number;
  adapterContexts: number;
  concurrency: number;
  /** Sequences of each base model's express context (HEARTH_EXPRESS_SEQUENCES). */
  expressSequences: number;
  contextSize: number;
  maxAdapters: number;
  /** KV cells idle sequences keep for prompts that start alike (HEARTH_PROMPT_CACHE_TOKENS); unset: Hearth's default, all. */
  promptCacheTokens?: number;
}

/** The base model's sequences over all its contexts. */
export function baseSequences(worker: WorkerSettings): number {
  return worker.contexts * worker.sequences;
}

/** The worker's settings with all its base model's sequences in one context (the engine's own ceiling). */
export function allInOneContext(worker: WorkerSettings): WorkerSettings {
  return { ...worker, contexts: 1, sequences: baseSequences(worker) };
}

export interface ClusterOptions {
  modelDir: string;
  /** Base model IDs the workers load. */
  serveModels: string[];
  db: "pglite" | "postgres";
  /** Admin URL of the PostgreSQL server (--db postgres): a database is created and dropped there. */
  postgresAdminUrl: string;
  redisUrl: string;
  workers: number;
  worker: WorkerSettings;
  /** Extra node arguments per role, e.g. --cpu-prof. */
  nodeArgs?: { api?: string[]; worker?: string[] };
  /** Settings of every process (e.g. HEARTH_USAGE_METERING), on top of the common ones. */
  env?: Record<string, string>;
  logLevel?: "debug" | "info" | "warn" | "error";
}

const root = fileURLToPath(new URL("../..", import.meta.url));
const entries = {
  api: path.join(root, "src/api/main.ts"),
  worker: path.join(root, "src/workers/main.ts"),
};

/**
 * A real Hearth for the bench, as separate processes: one API and N workers, on the
 * machine's Redis under a key prefix of its own and a fresh database (PGlite in a
 * temporary data directory, or a new PostgreSQL database). Workers can be replaced
 * with a different count or configuration between scenarios.
 */
export class HearthCluster {
  readonly apiKey = `hth_bench_${crypto.randomBytes(20).toString("base64url")}`;
  readonly prefix = `hearth-bench-${crypto.randomBytes(4).toString("hex")}`;
  /** Every process started, in order, with when it started and became ready (wall clock, ms): to read CPU profiles. */
  readonly processes: { role: string; pid: number; startedAt: number; readyAt?: number }[] = [];
  private api: HearthChild | undefined;
  private workerProcesses: HearthChild[] = [];
  private settings: WorkerSettings;
  private port = 0;
  /** Settings of the API process only (e.g. HEARTH_PLACEMENT), on top of the common ones. */
  private apiEnv: Record<string, string> = {};

  private constructor(
    private readonly options: ClusterOptions,
    readonly dataDir: string,
    private readonly database: BenchDatabase | undefined,
  ) {
    this.settings = options.worker;
  }

  static async start(options: ClusterOptions): Promise<HearthCluster> {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-bench-data-"));
    const database = options.db === "postgres" ? await createBenchDatabase(options.postgresAdminUrl) : undefined;
    const cluster = new HearthCluster(options, dataDir, database);
    try {
      await cluster.startApi();
      await cluster.setWorkers(options.workers, options.worker);
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get redisUrl(): string {
    return this.options.redisUrl;
  }

  get storageDir(): string {
    return path.join(this.dataDir, "storage");
  }

  get apiPid(): number {
    return this.api!.pid;
  }

  get workerPids(): number[] {
    return this.workerProcesses.map((w) => w.pid);
  }

  get workerSettings(): WorkerSettings {
    return this.settings;
  }

  /** Stops every worker, then starts `count` fresh ones and waits until all serve. */
  async setWorkers(count: number, settings: WorkerSettings = this.settings): Promise<void> {
    await Promise.all(this.workerProcesses.map((w) => w.stop()));
    this.workerProcesses = [];
    this.settings = settings;
    for (let i = 0; i < count; i++) {
      const worker = HearthChild.spawn(`worker ${i + 1}/${count} (${settings.threads} thread(s))`, entries.worker, {
        cwd: root,
        env: this.env(settings),
        nodeArgs: this.options.nodeArgs?.worker,
      });
      this.workerProcesses.push(worker);
      this.processes.push({ role: worker.role, pid: worker.pid, startedAt: Date.now() });
    }
    await this.waitUntil(
      async () => (await this.liveWorkers()) === count,
      120_000,
      () => {
        const dead = this.workerProcesses.find((w) => !w.running);
        return (
          (dead ?? this.workerProcesses[0])?.failure(`${count} worker(s) did not become ready`) ??
          new Error("no worker")
        );
      },
    );
    this.markReady(this.workerPids);
  }

  /**
   * Another Hearth like this one, running beside it: its own key prefix, database, port and API
   * key, one worker of this one's settings, with `env` on top of this one's settings.
   */
  twin(env: Record<string, string>): Promise<HearthCluster> {
    return HearthCluster.start({
      ...this.options,
      workers: 1,
      worker: this.settings,
      env: { ...this.options.env, ...env },
    });
  }

  /** Restarts the API process, on the same port, with `env` on top of the common settings (replacing earlier ones). */
  async restartApi(env: Record<string, string>): Promise<void> {
    await this.api?.stop();
    this.apiEnv = env;
    await this.startApi();
  }

  async close(): Promise<void> {
    await Promise.all(this.workerProcesses.map((w) => w.stop()));
    await this.api?.stop();
    await deleteRedisKeys(this.options.redisUrl, `${this.prefix}:*`);
    await this.database?.drop().catch(() => {});
    await fs.rm(this.dataDir, { recursive: true, force: true });
  }

  private async startApi() {
    if (this.port === 0) this.port = await freePort();
    this.api = HearthChild.spawn("API", entries.api, {
      cwd: root,
      env: { ...this.env(this.settings), ...this.apiEnv },
      nodeArgs: this.options.nodeArgs?.api,
    });
    this.processes.push({ role: "API", pid: this.api.pid, startedAt: Date.now() });
    await this.waitUntil(
      async () =>
        (await fetch(`${this.url}/healthz`).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      60_000,
      () => this.api!.failure("the API did not start"),
    );
    this.markReady([this.api.pid]);
  }

  private markReady(pids: number[]) {
    for (const p of this.processes) if (pids.includes(p.pid)) p.readyAt ??= Date.now();
  }

  private async liveWorkers(): Promise<number> {
    const reply = await fetch(`${this.url}/readyz`).then(
      (r) => r.json() as Promise<{ workers?: number }>,
      () => undefined,
    );
    return reply?.workers ?? 0;
  }

  private async waitUntil(ready: () => Promise<boolean>, timeoutMs: number, failure: () => Error) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await ready()) return;
      const crashed = [this.api, ...this.workerProcesses].some((p) => p && !p.running);
      if (crashed || Date.now() > deadline) throw failure();
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private env(settings: WorkerSettings): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(this.port),
      HOST: "127.0.0.1",
      REDIS_URL: this.options.redisUrl,
      HEARTH_REDIS_PREFIX: this.prefix,
      HEARTH_DATA_DIR: this.dataDir,
      HEARTH_MODEL_DIR: this.options.modelDir,
      HEARTH_STORAGE_DIR: this.storageDir,
      HEARTH_BUILD_DEMO_MODELS: "false",
      HEARTH_ADMIN_KEY: this.apiKey,
      HEARTH_SERVE_MODELS: this.options.serveModels.join(","),
      HEARTH_WORKER_THREADS: String(settings.threads),
      HEARTH_SEQUENCES_PER_CONTEXT: String(settings.sequences),
      HEARTH_ADAPTER_SEQUENCES: String(settings.adapterSequences),
      HEARTH_ADAPTER_CONTEXTS: String(settings.adapterContexts),
      HEARTH_WORKER_CONCURRENCY: String(settings.concurrency),
      HEARTH_EXPRESS_SEQUENCES: String(settings.expressSequences),
      HEARTH_CONTEXT_SIZE: String(settings.contextSize),
      HEARTH_CONTEXTS_PER_MODEL: String(settings.contexts),
      HEARTH_WORKER_MAX_ADAPTERS: String(settings.maxAdapters),
      HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: String(Math.max(64, settings.maxAdapters * 2)),
      HEARTH_MAX_QUEUE_DEPTH: "100000",
      // The bench measures the machine, not the abuse limits (the fairness scenario sets its own).
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: "0",
      HEARTH_RATE_LIMIT_TOKENS_PER_MINUTE: "0",
      HEARTH_KEY_REQUESTS_PER_MINUTE: "0",
      HEARTH_ACCOUNT_MAX_IN_FLIGHT: "1000000",
      HEARTH_LOG_LEVEL: this.options.logLevel ?? "warn",
    };
    if (settings.promptCacheTokens === undefined) delete env.HEARTH_PROMPT_CACHE_TOKENS;
    else env.HEARTH_PROMPT_CACHE_TOKENS = String(settings.promptCacheTokens);
    if (this.database) env.DATABASE_URL = this.database.url;
    else delete env.DATABASE_URL;
    return { ...env, ...this.options.env };
  }
}
