import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { ensureDemoModels } from "./models/factory/ensure-demo-models.js";
import { answers, startLocalRedis } from "./process/local-redis.js";

/**
 * `npm start`: Hearth on one machine. Makes sure Redis answers (starting a local
 * redis-server when REDIS_URL is unset and none runs), builds the demo models if
 * absent, then runs the API and one worker as child processes until stopped.
 */
const config = loadConfig(process.env);
const log = createLogger(config.logLevel, "hearth");
const children: ChildProcess[] = [];
let stopping = false;

function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  const timer = setTimeout(() => process.exit(code), 15_000);
  timer.unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null))).then(() =>
    process.exit(code),
  );
}

process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));

const redisAt = new URL(config.redisUrl);
const redisPort = Number(redisAt.port) || 6379;
if (!(await answers(redisAt.hostname.replace(/^\[|\]$/g, ""), redisPort))) {
  if (!config.redisUrlDefaulted) {
    log.error(
      `Nothing answers at REDIS_URL=${config.redisUrl}. Start that Redis, or unset REDIS_URL to use a local one.`,
    );
    process.exit(1);
  }
  const redis = await startLocalRedis({ dataDir: config.dataDir, port: redisPort, log });
  if (!redis) process.exit(1);
  children.push(redis);
}

await ensureDemoModels(config, log);
for (const entry of ["api/main.ts", "workers/main.ts"]) {
  const file = fileURLToPath(new URL(entry, import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", file], { stdio: "inherit", env: process.env });
  child.on("exit", (code, signal) => {
    if (!stopping) {
      log.error(`${entry} exited (${signal ?? code}); stopping Hearth.`);
      stopAll(code || 1);
    }
  });
  children.push(child);
}
