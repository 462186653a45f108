import { spawn, type ChildProcess } from "node:child_process";
import { freePort, waitForPort } from "./net.js";

/** Leaves the shared Redis as it was: removes every key a test instance made. */
import { REDIS_SERVER_SETTINGS, redisServerArgs } from "../../src/process/local-redis.js";

export { deleteRedisKeys } from "../../src/queues/redis-keys.js";

/** A redis-server of the test's own, for tests that stop or kill it. */
export interface PrivateRedis {
  port: number;
  url: string;
  process: ChildProcess;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

/** A redis-server of the test's own, set up as Hearth runs Redis; `settings` add or override (e.g. a smaller buffer). */
export async function startPrivateRedis(port?: number, settings: Record<string, string> = {}): Promise<PrivateRedis> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    "redis-server",
    ["--port", String(chosen), "--bind", "127.0.0.1", ...redisServerArgs({ ...REDIS_SERVER_SETTINGS, ...settings })],
    { stdio: "ignore" },
  );
  await waitForPort(chosen);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    process: child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
