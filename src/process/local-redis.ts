import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type { Logger } from "../logger.js";

export interface LocalRedisOptions {
  dataDir: string;
  port: number;
  log: Logger;
  /** The server binary; found on PATH by default. */
  binary?: string;
}

/**
 * How Hearth runs Redis (here and in docker-compose.yml): nothing persisted (the database is
 * the source of truth for deployments; docs/reliability.md), and room for an API process's
 * pub/sub connection to fall behind for a moment: all of an API's streams share it, and Redis
 * cuts it (and so all of them) when its output buffer passes the hard limit, or stays above
 * the soft one for the given seconds. Each message is at most about 256 KB (requests/stream.ts
 * MAX_EVENT_CHARS).
 */
export const REDIS_SERVER_SETTINGS = {
  save: "",
  appendonly: "no",
  "client-output-buffer-limit": "pubsub 128mb 32mb 60",
} as const;

/** The settings as redis-server command-line arguments. */
export const redisServerArgs = (settings: Record<string, string> = REDIS_SERVER_SETTINGS) =>
  Object.entries(settings).flatMap(([name, value]) => [`--${name}`, value]);

/**
 * Starts `redis-server` on 127.0.0.1 as a child (nothing persisted), for a laptop
 * start with no Redis running, and waits until it answers. Undefined, after a
 * message saying how to get Redis, when the binary is not installed.
 */
export async function startLocalRedis(options: LocalRedisOptions): Promise<ChildProcess | undefined> {
  const { dataDir, port, log, binary = "redis-server" } = options;
  if (spawnSync(binary, ["--version"], { stdio: "ignore" }).error) {
    log.error(
      `Redis is needed and none answers at redis://127.0.0.1:${port}. Install it (Debian/Ubuntu: \`apt-get install redis-server\`; macOS: \`brew install redis\`), start it, or set REDIS_URL.`,
    );
    return undefined;
  }
  const dir = path.resolve(dataDir, "redis");
  await fs.mkdir(dir, { recursive: true });
  const child = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", ...redisServerArgs(), "--dir", dir], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (let i = 0; i < 50 && child.exitCode === null; i++) {
    if (await answers("127.0.0.1", port)) {
      log.info(`started a local redis-server on 127.0.0.1:${port}`, { pid: child.pid });
      return child;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  log.error(`redis-server did not start on 127.0.0.1:${port}; start Redis yourself or set REDIS_URL.`);
  return undefined;
}

/** Whether something accepts TCP connections at host:port within a second. */
export function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
