import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { ensureDemoModels } from "./models/ensure-demo-models.js";
import { startLocalRedis } from "./process/local-redis.js";

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

if (!(await redisAnswers(config.redisUrl))) {
  if (!config.redisUrlDefaulted) {
    log.error(`Nothing answers at REDIS_URL=${config.redisUrl}. Start that Redis, or unset REDIS_URL to use a local one.`);
    process.exit(1);
  }
  const redis = await startLocalRedis(config.dataDir, log);
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

async function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, "") || "127.0.0.1", port: Number(port) || 6379 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
