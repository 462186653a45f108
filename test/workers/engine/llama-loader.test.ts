import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testModelDir } from "../../helpers/test-models.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");

/** A worker process (`npm run start:worker`), to its exit; none of these gets as far as Redis. */
function runWorker(env: Record<string, string>, dataDir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/workers/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        HEARTH_DATA_DIR: dataDir,
        HEARTH_MODEL_DIR: testModelDir,
        HEARTH_BUILD_DEMO_MODELS: "false",
        REDIS_URL: "redis://127.0.0.1:1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("a worker's llama.cpp backend", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "hearth-gpu-worker-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("HEARTH_GPU=cuda where CUDA cannot run stops the worker at start, saying why and what to run", async () => {
    // No GPU for CUDA on any machine: on this one there is none, and CUDA sees none where there is.
    const { code, output } = await runWorker({ HEARTH_GPU: "cuda", CUDA_VISIBLE_DEVICES: "-1" }, dataDir);
    expect(code, output).toBe(1);
    const stop = output.split("\n").find((line) => line.includes("HEARTH_GPU=cuda, but"));
    expect(stop, output).toBeDefined();
    expect(stop).toContain('"level":"error"');
    expect(stop).toContain("node-llama-cpp could not load a CUDA backend");
    expect(stop).toContain("(the probe exited with code 3)");
    expect(stop).toContain("npm run build:cuda");
    expect(stop).toContain("Dockerfile.cuda");
    expect(stop).toContain("The worker stops");
  });
});
