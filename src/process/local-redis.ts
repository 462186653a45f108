import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logger.js";

/**
 * Starts `redis-server` on 127.0.0.1:6379 as a child (nothing persisted), for a
 * laptop start with no Redis running. Undefined, with a message saying how to get
 * Redis, when the binary is not installed.
 */
export async function startLocalRedis(dataDir: string, log: Logger): Promise<ChildProcess | undefined> {
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).error) {
    log.error(
      "Redis is needed and none answers at redis://127.0.0.1:6379. Install it (Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`), start it, or set REDIS_URL.",
    );
    return undefined;
  }
  const dir = path.resolve(dataDir, "redis");
  await fs.mkdir(dir, { recursive: true });
  const child = spawn(
    "redis-server",
    ["--port", "6379", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  log.info("started a local redis-server on 127.0.0.1:6379", { pid: child.pid });
  // Give it a moment to listen before the API and worker connect (they retry anyway).
  await new Promise((r) => setTimeout(r, 300));
  return child;
}
