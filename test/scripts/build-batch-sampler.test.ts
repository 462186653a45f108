import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** `npm run build:batch-sampler -- <args>` (the script itself, under tsx), with the environment given. */
function buildBatchSampler(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/build-batch-sampler.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

// Only the refusals run here (they stop before the build in node_modules is touched); `npm ci`
// builds it for real (prepare), and batch-sampler.test.ts needs that build.
describe("npm run build:batch-sampler", () => {
  const noCompiler = { CXX: "/nonexistent/g++" };

  it("without a compiler, exits 2 naming what is missing", async () => {
    const { code, stderr } = await buildBatchSampler([], noCompiler);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain("batch sampler: /nonexistent/g++ was not found");
  });

  it("with --if-possible (as npm ci runs it), says it is not built and exits 0", async () => {
    const { code, stdout, stderr } = await buildBatchSampler(["--if-possible"], noCompiler);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("batch sampler not built: /nonexistent/g++ was not found");
    expect(stdout).toContain("workers sample one sequence a call");
  });
});
