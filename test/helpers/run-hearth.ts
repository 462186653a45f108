import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** Runs the real `hearth` binary (bin/hearth.js) as a child process, as a person or a script would. */

export const HEARTH_BIN = path.resolve(import.meta.dirname, "../../bin/hearth.js");

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Piped to stdin (stdin is closed either way, so it is never a terminal). */
  input?: string;
  env?: Record<string, string | undefined>;
}

/** The environment of a run: nothing of the developer's own Hearth settings leaks in. */
export function cliEnv(configDir: string, env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, HEARTH_CONFIG_DIR: configDir, NO_COLOR: "1" };
  for (const name of [
    "HEARTH_API_KEY",
    "SERVICE_API_KEY",
    "HEARTH_BASE_URL",
    "HEARTH_UPDATE_SOURCE",
    "XDG_CONFIG_HOME",
  ])
    delete base[name];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base;
}

export function startHearthCli(args: string[], configDir: string, options: CliOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [HEARTH_BIN, ...args], {
    env: cliEnv(configDir, options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin!.end(options.input ?? "");
  return child;
}

export function finished(child: ChildProcess): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export function runHearthCli(args: string[], configDir: string, options: CliOptions = {}): Promise<CliRun> {
  return finished(startHearthCli(args, configDir, options));
}

/** A fresh config directory (HEARTH_CONFIG_DIR) for one test file. */
export async function tempConfigDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "hearth-cli-config-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The run's stdout as the one JSON document it must be. */
export function json(run: CliRun): any {
  return JSON.parse(run.stdout);
}
