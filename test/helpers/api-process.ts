import path from "node:path";
import { HearthChild } from "../../bench/src/child-process.js";
import { freePort } from "../../bench/src/free-port.js";
import { eventually } from "./eventually.js";
import type { TestHearth } from "./hearth.js";
import { testModelDir } from "./test-models.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * Another API process of the test Hearth (which must use PostgreSQL: PGlite is one
 * process's): same database, Redis prefix and admin key. Resolves once it answers.
 */
export async function spawnApi(
  hearth: TestHearth,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ child: HearthChild; url: string }> {
  if (!hearth.config.databaseUrl) throw new Error("a second API process needs the test Hearth on PostgreSQL");
  const port = await freePort();
  const child = HearthChild.spawn("API", "src/api/main.ts", {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: hearth.config.databaseUrl,
      REDIS_URL: hearth.config.redisUrl,
      HEARTH_REDIS_PREFIX: hearth.config.redisPrefix,
      HEARTH_ADMIN_KEY: hearth.apiKey,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_MODEL_DIR: testModelDir,
      HEARTH_BUILD_DEMO_MODELS: "false",
      HEARTH_LOG_LEVEL: "warn",
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (!child.running) throw child.failure("the API did not start");
    const status = await fetch(`${url}/healthz`).then((r) => r.status);
    if (status !== 200) throw new Error(`the API answers /healthz with ${status}`);
  }, 60_000);
  return { child, url };
}
