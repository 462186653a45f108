import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./net.js";
import { deleteRedisKeys } from "./redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Hearth as `npm start` runs it: the supervisor, with the API and a worker as child processes. */
export interface StartedHearth {
  child: ChildProcess;
  dataDir: string;
  port: number;
  /** What it printed, stdout and stderr together. */
  output(): string;
  /** What it had printed before the last /readyz that was not 200 (or got no answer) was asked. */
  outputBeforeReady: string;
  /** Ctrl-C in its terminal: SIGINT to its process group (the supervisor, the API and the worker). */
  interrupt(): void;
  /** The admin key it wrote on its first start. */
  adminKey(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts it on a free port with a fresh Redis prefix and data directory (or `dataDir`, which
 * its owner removes), in this repository or the copy of it at `cwd`, and waits until it is
 * ready (unless `waitUntilReady` is false). Its processes form one group: close() stops them all.
 */
export async function startNpmStart(
  env: Record<string, string> = {},
  options: { dataDir?: string; cwd?: string; port?: number; waitUntilReady?: boolean } = {},
): Promise<StartedHearth> {
  const cwd = options.cwd ?? root;
  const dataDir = options.dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), "hearth-start-")));
  const port = options.port ?? (await freePort());
  const prefix = `hearth-start-${crypto.randomBytes(4).toString("hex")}`;
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", path.join(cwd, "src/main.ts")], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HEARTH_DATA_DIR: dataDir,
      REDIS_URL: redisUrl,
      HEARTH_REDIS_PREFIX: prefix,
      HEARTH_CONTEXT_SIZE: "2048",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal gives it: a Ctrl-C (SIGINT to the group) can be
    // sent to it alone, and close() ends the group, API and worker included.
    detached: true,
  });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const started: StartedHearth = {
    child,
    dataDir,
    port,
    output: () => output,
    outputBeforeReady: "",
    interrupt: () => process.kill(-child.pid!, "SIGINT"),
    adminKey: async () => (await fs.readFile(path.join(dataDir, "admin-api-key"), "utf8")).trim(),
    close: async () => {
      await stopGroup(child);
      if (!options.dataDir) await fs.rm(dataDir, { recursive: true, force: true });
      await deleteRedisKeys(redisUrl, `${prefix}:*`);
    },
  };
  if (options.waitUntilReady === false) return started;
  try {
    started.outputBeforeReady = await waitUntilReady(`http://127.0.0.1:${port}`, 90_000, () => output);
  } catch (error) {
    await started.close();
    throw error;
  }
  return started;
}

/**
 * SIGTERM, which stops the API and the worker in order, then (at once, or after 30 s) SIGKILL
 * to whatever of its process group is left.
 */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
  }
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * Resolves, once /readyz at `url` says 200 and Hearth has printed its ready line for `url` (so
 * that it is this Hearth that answers), to the output as it was before the last answer that was not.
 */
async function waitUntilReady(url: string, timeoutMs: number, log: () => string): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let beforeNotReady = "";
  while (Date.now() < deadline) {
    const before = log();
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok && log().includes(`Hearth is ready: ${url} `)) return beforeNotReady;
    if (ok) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    beforeNotReady = before;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Hearth did not become ready:\n${log()}`);
}
