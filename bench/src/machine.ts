import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { HEARTH_VERSION } from "../../src/package-info.js";
import { llamaBuildInfo, type LlamaBuildInfo } from "./in-process.js";

/** What the figures were measured on: they mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  availableParallelism: number;
  totalMemoryBytes: number;
  os: string;
  node: string;
  hearth: string;
  nodeLlamaCpp: string;
  llamaCpp: LlamaBuildInfo;
  redis: string;
  gitCommit: string | null;
  /** Uncommitted changes in the checkout when the bench ran. */
  gitDirty: boolean | null;
  /** 1-, 5- and 15-minute load averages before the run: other work on the machine skews every figure. */
  loadAverageBefore: number[];
  loadAverageAfter?: number[];
  /** Where the workers' models computed (HEARTH_GPU), from /readyz: e.g. {"cpu": 1}. */
  backends?: Record<string, number>;
}

/**
 * The class of machine a result belongs to, in the results' file names: where the models
 * computed (the workers' backends; cpu when none reported) and the core count, e.g.
 * "cpu-2cores" or "cuda-16cores". Figures compare within a class, not across.
 */
export function machineClass(machine: Pick<MachineInfo, "backends" | "cores">): string {
  const backends = Object.keys(machine.backends ?? {}).sort();
  return `${backends.length > 0 ? backends.join("+") : "cpu"}-${machine.cores}cores`;
}

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

export async function describeMachine(redisUrl: string): Promise<MachineInfo> {
  const cpus = os.cpus();
  const [llamaCpp, nodeLlamaCpp, redis, git] = await Promise.all([
    llamaBuildInfo(),
    packageVersion("node-llama-cpp"),
    redisVersion(redisUrl),
    gitState(),
  ]);
  return {
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    availableParallelism: os.availableParallelism(),
    totalMemoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    hearth: HEARTH_VERSION,
    nodeLlamaCpp,
    llamaCpp,
    redis,
    ...git,
    loadAverageBefore: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}

async function packageVersion(name: string): Promise<string> {
  // The package's entry point, then up to its package.json.
  let dir = path.dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    const manifest = await readFile(path.join(dir, "package.json"), "utf8").then(
      (text) => JSON.parse(text) as { name?: string; version?: string },
      () => undefined,
    );
    if (manifest?.name === name && manifest.version) return manifest.version;
    const parent = path.dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}

async function redisVersion(url: string): Promise<string> {
  return (await redisServerInfo(url))?.match(/^redis_version:(\S+)/m)?.[1] ?? "unknown";
}

/** The process ID of the Redis at `url` when it runs on this machine (its CPU time can be read), else undefined. */
export async function localRedisPid(url: string): Promise<number | undefined> {
  if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname)) return undefined;
  const pid = Number((await redisServerInfo(url))?.match(/^process_id:(\d+)/m)?.[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function redisServerInfo(url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await redis.info("server");
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

async function gitState(): Promise<{ gitCommit: string | null; gitDirty: boolean | null }> {
  try {
    const commit = (await run("git", ["rev-parse", "HEAD"], { cwd: root })).stdout.trim();
    const status = (await run("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root })).stdout;
    return { gitCommit: commit, gitDirty: status.trim().length > 0 };
  } catch {
    return { gitCommit: null, gitDirty: null };
  }
}
