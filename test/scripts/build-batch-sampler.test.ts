import { describe, expect, it } from "vitest";
import { runScript } from "../helpers/run-script.js";

/** `npm run build:batch-sampler -- <args>` (the script itself, under tsx), with the environment given. */
const buildBatchSampler = (args: string[], env: Record<string, string>) =>
  runScript("build-batch-sampler.ts", args, env);

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
