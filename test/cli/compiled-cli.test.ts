import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPILED_CLI_ENTRY, outdatedBecause } from "../../bin/compiled-cli.js";
import { HEARTH_VERSION } from "../../src/package-info.js";
import { cliEnv, finished, runHearthCli, tempConfigDir, type CliRun } from "../helpers/run-hearth.js";

/**
 * The CLI compiled into dist/cli (npm run build; test/global-setup.ts compiles it for the run),
 * and the launcher's rule: the compiled CLI while it matches its sources, the sources otherwise.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");

let config: Awaited<ReturnType<typeof tempConfigDir>>;
let copy: string;

beforeAll(async () => {
  config = await tempConfigDir();
  // A copy of the package: its files get new modification times, as in an install.
  copy = await mkdtemp(path.join(os.tmpdir(), "hearth-compiled-cli-"));
  for (const entry of ["package.json", "bin", "dist", "src"])
    await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  await symlink(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
});
afterAll(async () => {
  await config?.remove();
  if (copy) await rm(copy, { recursive: true, force: true });
});

const runCopy = (args: string[]): Promise<CliRun> =>
  finished(
    spawn(process.execPath, [path.join(copy, "bin", "hearth.js"), ...args], {
      env: cliEnv(config.dir),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );

describe("the compiled CLI", () => {
  it("is what `hearth` runs, and runs from dist/cli by itself", async () => {
    expect(outdatedBecause()).toBeNull();
    const launched = await runHearthCli(["--cli-version"], config.dir);
    expect(launched).toMatchObject({ code: 0, stdout: `${HEARTH_VERSION}\n`, stderr: "" });

    const script = `const { runCli } = await import(${JSON.stringify(pathToFileURL(COMPILED_CLI_ENTRY).href)});
process.exitCode = await runCli([process.argv[0], "hearth", "version", "--output", "json"]);`;
    const direct = await finished(
      spawn(process.execPath, ["--input-type=module", "-e", script], {
        env: cliEnv(config.dir, { HEARTH_BASE_URL: "http://127.0.0.1:9" }),
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    // No server answers on port 9: the CLI's own version still comes out, and exit code 1.
    expect(direct.code, direct.stderr).toBe(1);
    expect(JSON.parse(direct.stdout)).toMatchObject({ cli: HEARTH_VERSION, server: { version: null } });
  });

  it("stays in use where the files were copied unchanged", async () => {
    expect(await runCopy(["--cli-version"])).toMatchObject({ code: 0, stdout: `${HEARTH_VERSION}\n`, stderr: "" });
  });

  it("gives way to the sources, saying so, once one changes, even to the same size", async () => {
    const main = path.join(copy, "src", "cli", "main.ts");
    const source = await readFile(main, "utf8");
    expect(source).toContain("Manage LoRA adapters");
    await writeFile(main, source.replace("Manage LoRA adapters", "Manage LORA adapters"));
    const help = await runCopy(["--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("Manage LORA adapters");
    expect(help.stderr).toBe(
      "hearth: src/cli/main.ts changed since the CLI was compiled: running its sources (slower); `npm run build` compiles it.\n",
    );
  });

  it("runs the sources when nothing was compiled", async () => {
    await rm(path.join(copy, "dist"), { recursive: true });
    const run = await runCopy(["--cli-version"]);
    expect(run).toMatchObject({ code: 0, stdout: `${HEARTH_VERSION}\n` });
    expect(run.stderr).toContain("hearth: the CLI is not compiled: running its sources");
  });
});
