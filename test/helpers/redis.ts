import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort, waitForPort } from "./net.js";

/** Leaves the shared Redis as it was: removes every key a test instance made. */
import { REDIS_SERVER_SETTINGS, redisServerArgs } from "../../src/process/local-redis.js";

export { deleteRedisKeys } from "../../src/redis/redis-keys.js";

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

/** A Redis Cluster of the test's own: `masters` redis-servers on loopback ports, slots split between them. */
export interface PrivateRedisCluster {
  ports: number[];
  /** A node's URL: what HEARTH_REDIS_CLUSTER's REDIS_URL names. */
  url: string;
  stop(): Promise<void>;
}

export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "hearth-redis-cluster-"));
  const nodes: PrivateRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      nodes.push(
        await startPrivateRedis(port, {
          "cluster-enabled": "yes",
          "cluster-config-file": path.join(dir, `nodes-${port}.conf`),
          dir,
        }),
      );
    }
    const ports = nodes.map((n) => n.port);
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (let i = 0; ; i++) {
      const infos = await Promise.all(ports.map((p) => run("redis-cli", ["-p", String(p), "cluster", "info"])));
      if (infos.every((info) => info.includes("cluster_state:ok"))) break;
      if (i > 100) throw new Error(`the Redis Cluster did not come up:\n${infos.join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { ports, url: nodes[0]!.url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(" ")}: ${out}`))));
  });
}
