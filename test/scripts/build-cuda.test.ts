import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript, type ScriptRun } from "../helpers/run-script.js";

/** `npm run build:cuda -- <args>` (the script itself, under tsx), with the PATH given. */
function buildCuda(args: string[], PATH: string, env: Record<string, string> = {}): Promise<ScriptRun> {
  return runScript("build-cuda.ts", args, { ...env, PATH });
}

// Only the refusals run here: a build compiles for the better part of an hour.
describe("npm run build:cuda", () => {
  let emptyBin: string;
  beforeAll(async () => {
    emptyBin = await mkdtemp(path.join(os.tmpdir(), "hearth-no-nvcc-"));
  });
  afterAll(() => rm(emptyBin, { recursive: true, force: true }));

  it("without nvcc on PATH, exits 2 saying what to install, before building anything", async () => {
    const { code, stdout, stderr } = await buildCuda(["--arch", "90"], emptyBin);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain("nvcc, CUDA's compiler, is not on PATH");
    expect(stderr).toMatch(/CUDA toolkit/);
    expect(stderr).toMatch(/cuda-toolkit|PATH=\/usr\/local\/cuda[^ ]*\/bin:\$PATH npm run build:cuda/);
    expect(stdout).not.toContain("Building");
  });

  it("refuses an architecture that is not one, naming it, in --arch or HEARTH_CUDA_ARCHITECTURES", async () => {
    const flag = await buildCuda(["--arch", "sm_90"], emptyBin);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--arch sm_90: sm_90: an architecture is a number like 80 or 90");
    const variable = await buildCuda([], emptyBin, { HEARTH_CUDA_ARCHITECTURES: "hopper" });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toMatch(/HEARTH_CUDA_ARCHITECTURES.*hopper: an architecture is a number/);
  });
});
