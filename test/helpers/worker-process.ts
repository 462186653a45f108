import path from "node:path";
import { HearthChild } from "../../bench/src/child-process.js";
import type { TestHearth } from "./hearth.js";
import { testModelDir } from "./test-models.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A worker as a process of its own, on the test Hearth's Redis and prefix; `env` adds or overrides settings. */
export function spawnWorker(
  hearth: TestHearth,
  dataDir: string,
  env: Record<string, string>,
  role = "worker",
): HearthChild {
  return HearthChild.spawn(role, "src/workers/main.ts", {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL: hearth.config.redisUrl,
      HEARTH_REDIS_PREFIX: hearth.config.redisPrefix,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_MODEL_DIR: testModelDir,
      HEARTH_BUILD_DEMO_MODELS: "false",
      HEARTH_WORKER_THREADS: "1",
      HEARTH_CONTEXT_SIZE: "512",
      HEARTH_LOG_LEVEL: "warn",
      ...env,
    },
  });
}
