import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startApi, type RunningApi } from "../../src/api/server.js";
import { loadConfig, type Config } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import { HearthWorker } from "../../src/workers/worker.js";
import { createTestPostgresDatabase, type TestDatabaseBackend } from "./test-databases.js";
import { deleteRedisKeys } from "./redis.js";
import { testModelDir } from "./test-models.js";

export interface TestHearth {
  url: string;
  /** Base URL for the OpenAI SDK. */
  baseURL: string;
  apiKey: string;
  config: Config;
  api: RunningApi;
  worker: HearthWorker | undefined;
  /** Closes the API and starts it again (on another port), on the same database and Redis prefix. */
  restartApi(): Promise<void>;
  /** Starts (another) worker in this process, with `env` on top of the API's; closed with the rest. */
  startWorker(env?: Record<string, string>): Promise<HearthWorker>;
  close(): Promise<void>;
}

export interface TestHearthOptions {
  backend?: TestDatabaseBackend;
  worker?: boolean;
  env?: Record<string, string>;
  /** The clock of the API's model and API-key caches (default: Date.now). */
  now?: () => number;
}

let sharedEngine: Promise<LlamaEngine> | undefined;

/**
 * A real Hearth in this test process: the API on a random port and (unless told
 * otherwise) a worker, against the machine's Redis under a prefix of its own and a
 * fresh database (PGlite in a temp dir, or a new PostgreSQL database).
 */
export async function startTestHearth(options: TestHearthOptions = {}): Promise<TestHearth> {
  const backend = options.backend ?? "pglite";
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-test-"));
  const pg = backend === "postgres" ? await createTestPostgresDatabase() : undefined;
  const apiKey = `hth_test_${crypto.randomBytes(20).toString("base64url")}`;
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    HEARTH_DATA_DIR: dataDir,
    HEARTH_MODEL_DIR: testModelDir,
    HEARTH_BUILD_DEMO_MODELS: "false",
    HEARTH_ADMIN_KEY: apiKey,
    HEARTH_REDIS_PREFIX: `hearth-test-${crypto.randomBytes(4).toString("hex")}`,
    HEARTH_LOG_LEVEL: process.env.HEARTH_TEST_LOG_LEVEL ?? "warn",
    HEARTH_WORKER_THREADS: "1",
    HEARTH_CONTEXT_SIZE: "512",
    // Limits far above what a test sends, so their code runs on every request without refusing
    // any; the tests of the limits set their own.
    HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000000",
    HEARTH_KEY_REQUESTS_PER_MINUTE: "1000000",
    HEARTH_AUTH_FAILURES_PER_MINUTE: "1000000",
    HEARTH_PAGE_REQUESTS_PER_MINUTE: "1000000",
    HEARTH_ACCOUNT_MAX_IN_FLIGHT: "100000",
    HEARTH_ACCOUNT_MAX_MODELS: "100000",
    // Usage records stay as written (tests write some with fixed, ageing dates); the roll-up's tests set it.
    HEARTH_USAGE_RETENTION_DAYS: "0",
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...(pg ? { DATABASE_URL: pg.url } : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const log = createLogger(config.logLevel, "test");
  const start = () => startApi(config, log, { now: options.now });
  let api = await start().catch(async (err: unknown) => {
    await pg?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  const workers: HearthWorker[] = [];
  const startWorker = async (workerEnv?: Record<string, string>) => {
    sharedEngine ??= LlamaEngine.create();
    const worker = await HearthWorker.start(
      workerEnv ? loadConfig({ ...env, ...workerEnv }) : config,
      await sharedEngine,
      log,
    );
    workers.push(worker);
    return worker;
  };
  const worker = options.worker === false ? undefined : await startWorker();
  return {
    get url() {
      return api.url;
    },
    get baseURL() {
      return `${api.url}/v1`;
    },
    apiKey,
    config,
    get api() {
      return api;
    },
    worker,
    startWorker,
    async restartApi() {
      await api.close();
      api = await start();
    },
    async close() {
      for (const w of workers) await w.close(1_000);
      await api.close();
      await deleteRedisKeys(config.redisUrl, `${config.redisPrefix}:*`);
      await pg?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
