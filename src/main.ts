import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { ensureDemoModels } from "./models/factory/ensure-demo-models.js";
import { answers, startLocalRedis } from "./process/local-redis.js";
import { announceWhenReady, listeningPort } from "./process/ready-announcement.js";

/**
 * `npm start`: Hearth on one machine. Makes sure Redis answers (starting a local
 * redis-server when REDIS_URL is unset and none runs), builds the demo models if
 * absent, then runs the API and one worker as child processes until stopped. It stops
 * them in order: the API first (it takes no new request and lets its streams finish),
 * then the worker (its jobs finish), then the Redis both were using. Once the API says it
 * listens and a worker is ready, it prints one line with the address and where the admin key is.
 */
const config = loadConfig(process.env);
const log = createLogger(config.logLevel, "hearth");
const children = new Map<"redis" | "api" | "worker", ChildProcess>();
let stopping = false;
const announcing = new AbortController();

/** SIGTERM, then SIGKILL once `graceMs` has passed; resolves when the process is gone. */
function stop(child: ChildProcess | undefined, graceMs: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  return gone.finally(() => clearTimeout(timer));
}

async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  announcing.abort();
  const margin = 5_000;
  for (const [role, graceMs] of [
    ["api", config.drain.apiMs + margin],
    ["worker", config.drain.workerMs + margin],
    ["redis", margin],
  ] as const) {
    if (!children.has(role)) continue;
    await stop(children.get(role), graceMs);
    log.info(`stopped: ${role}`);
  }
  process.exit(code);
}

/** A second Ctrl-C: no more waiting. */
function killAll() {
  for (const child of children.values()) child.kill("SIGKILL");
  process.exit(130);
}

process.on("SIGINT", () => (stopping ? killAll() : void stopAll(0)));
process.on("SIGTERM", () => void stopAll(0));

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
  children.set("redis", redis);
}

await ensureDemoModels(config, log);
log.info("starting the API and a worker");
for (const [role, entry] of [
  ["api", "api/main.ts"],
  ["worker", "workers/main.ts"],
] as const) {
  const file = fileURLToPath(new URL(entry, import.meta.url));
  // The IPC channel is how a child knows this process is gone, should it die unstopped (lifecycle.ts).
  const child = spawn(process.execPath, ["--import", "tsx", file], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    env: process.env,
  });
  child.on("exit", (code, signal) => {
    if (!stopping) {
      log.error(`${entry} exited (${signal ?? code}); stopping Hearth.`);
      void stopAll(code || 1);
    }
  });
  if (role === "api") {
    child.on("message", (message) => {
      const port = listeningPort(message);
      if (port !== undefined) void announceWhenReady({ ...config, port }, log, { signal: announcing.signal });
    });
  }
  children.set(role, child);
}
