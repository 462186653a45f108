import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Whether CUDA kernels run here, asked of a child process (cuda-probe.ts): it loads the CUDA
 * backend the worker would load, a tiny model with every layer on the GPU, and evaluates a few
 * tokens. It has to be a child: node-llama-cpp's own check of a backend only loads the library,
 * so a backend without code for this GPU (or with PTX newer than the driver) loads fine and
 * fails at its first kernel, where ggml's CUDA error handling aborts the whole process.
 */

/** The lines the probe writes on stdout as it goes; the parent reads how far it got. */
export const PROBE_LOADED = "hearth-cuda-probe: loaded";
export const PROBE_PASSED = "hearth-cuda-probe: passed";
export const PROBE_FAILED = "hearth-cuda-probe: failed";

/** A first run of a build with only PTX for this GPU compiles kernels then (the driver caches them). */
export const PROBE_TIMEOUT_MS = 180_000;
/** The end of the probe's output kept for the reason (ggml's error lines come last). */
const KEPT_OUTPUT_CHARS = 64 * 1024;

export type CudaProbe =
  | { ok: true; devices: string[]; build: string }
  | {
      ok: false;
      /** "load": no CUDA backend loaded at all; "run": it loaded, and the model or its kernels failed. */
      stage: "load" | "run";
      /** One line: CUDA's error, or node-llama-cpp's words, and how the probe ended. */
      reason: string;
      /** Which CUDA backend loaded before the failure ("localBuild", "prebuilt"), at stage "run". */
      build?: string;
      output: string;
    };

export interface ProbeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOutMs?: number;
}

/** Runs the probe with getLlama's `cmakeOptions` (a local build's, local-cuda-build.ts). */
export async function probeCuda(
  options: { cmakeOptions?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CudaProbe> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "hearth-cuda-probe-"));
  try {
    const { output, exit } = await runProbe(dir, options.cmakeOptions ?? {}, options.timeoutMs ?? PROBE_TIMEOUT_MS);
    return readProbe(output, exit);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the probe's output and exit say. */
export function readProbe(output: string, exit: ProbeExit): CudaProbe {
  const lines = output.split("\n").map((line) => line.trim());
  const passed = lines.find((line) => line.startsWith(PROBE_PASSED));
  if (passed && exit.code === 0) {
    const result = parseJson(passed.slice(PROBE_PASSED.length)) as { devices?: unknown; build?: unknown } | undefined;
    const devices = Array.isArray(result?.devices) ? result.devices.map(String) : [];
    return { ok: true, devices, build: typeof result?.build === "string" ? result.build : "unknown" };
  }
  const loaded = lines.find((line) => line.startsWith(PROBE_LOADED));
  const reason = `${failureText(lines)} (${exitText(exit)})`;
  if (!loaded) return { ok: false, stage: "load", reason, output };
  const build = (parseJson(loaded.slice(PROBE_LOADED.length)) as { build?: unknown } | undefined)?.build;
  return { ok: false, stage: "run", reason, ...(typeof build === "string" ? { build } : {}), output };
}

/** ggml's CUDA error line first; else node-llama-cpp's words and the probe's own; else the last line. */
function failureText(lines: string[]): string {
  const cudaError = lines.map((line) => /CUDA error: (.+)$/.exec(line)).find(Boolean);
  if (cudaError) return `CUDA error: ${cudaError[1]!.trim()}`;
  const said = [
    ...lines.filter((line) => line.startsWith("[node-llama-cpp]")).map((line) => line.slice(16).trim()),
    ...lines.filter((line) => line.startsWith(PROBE_FAILED)).map((line) => line.slice(PROBE_FAILED.length).trim()),
  ].filter((line) => line !== "");
  if (said.length > 0) return [...new Set(said)].join("; ");
  const last = lines.filter((line) => line !== "" && !line.startsWith("hearth-cuda-probe:")).at(-1);
  return last ?? "the probe said nothing";
}

function exitText(exit: ProbeExit): string {
  if (exit.timedOutMs !== undefined) return `the probe did not finish in ${Math.round(exit.timedOutMs / 1000)} s`;
  if (exit.signal) return `the probe was killed by ${exit.signal}`;
  return `the probe exited with code ${exit.code}`;
}

function runProbe(
  dir: string,
  cmakeOptions: Record<string, string>,
  timeoutMs: number,
): Promise<{ output: string; exit: ProbeExit }> {
  // From the TypeScript sources (tsx, vitest) the child registers tsx itself, by its absolute path.
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = fileURLToPath(new URL(fromSources ? "./cuda-probe.ts" : "./cuda-probe.js", import.meta.url));
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const args = [...(fromSources ? ["--import", tsx] : []), entry, dir, JSON.stringify(cmakeOptions)];
  return new Promise((resolve, reject) => {
    // Its own process group: on a timeout the group goes, node-llama-cpp's binary-test child included.
    const child = spawn(process.execPath, args, {
      env: { ...process.env, GGML_NO_BACKTRACE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-KEPT_OUTPUT_CHARS);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ output, exit: { code, signal, ...(timedOut ? { timedOutMs: timeoutMs } : {}) } });
    });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
