/**
 * The plumbing of the versus scenario that needs no llama-server: `--versus llama-server=PATH`
 * is checked before anything starts. The scenario itself runs only in the bench, with a binary
 * built from llama.cpp's source (docs/bench-versus.md), which neither CI nor a test machine has;
 * nothing here stands in for it.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llamaServerBinary } from "../../bench/src/llama-server.js";

let dir: string;
let plainFile: string;
let executable: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-versus-option-"));
  plainFile = path.join(dir, "not-executable");
  executable = path.join(dir, "executable");
  await writeFile(plainFile, "");
  await writeFile(executable, "");
  await chmod(executable, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `npm run bench -- <args>`'s exit code and what it printed on stderr. */
function bench(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ["--import", "tsx", "scripts/bench.ts", ...args], (_error, _out, stderr) =>
      resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe("--versus llama-server=PATH", () => {
  it("names an executable file, as an absolute path", () => {
    expect(llamaServerBinary(`llama-server=${executable}`)).toEqual({ path: executable });
    const relative = path.relative(process.cwd(), executable);
    expect(llamaServerBinary(`llama-server=${relative}`)).toEqual({ path: executable });
  });

  it("refuses another form, a missing file, a folder and a file that is not executable", () => {
    expect(llamaServerBinary(executable)).toEqual({ error: expect.stringContaining("must be llama-server=PATH") });
    expect(llamaServerBinary("llama-server=")).toEqual({ error: expect.stringContaining("must be llama-server=PATH") });
    expect(llamaServerBinary(`llama-server=${path.join(dir, "missing")}`)).toEqual({
      error: expect.stringContaining("does not exist"),
    });
    expect(llamaServerBinary(`llama-server=${dir}`)).toEqual({ error: expect.stringContaining("is not a file") });
    expect(llamaServerBinary(`llama-server=${plainFile}`)).toEqual({
      error: expect.stringContaining("is not executable"),
    });
  });

  it("stops the bench with a usage error before anything starts", async () => {
    const [missing, noBinary] = await Promise.all([
      bench(["--quick", "--versus", `llama-server=${path.join(dir, "missing")}`]),
      bench(["--quick", "--scenarios", "versus"]),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist");
    expect(missing.stderr).toContain("usage: npm run bench");
    expect(noBinary.code).toBe(2);
    expect(noBinary.stderr).toContain("the scenario versus needs --versus llama-server=PATH");
  }, 60_000);
});
