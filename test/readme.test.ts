import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { freshClone } from "./helpers/fresh-clone.js";
import { startNpmStart, type StartedHearth } from "./helpers/npm-start.js";
import { readmeBlocks, type ReadmeBlock } from "./helpers/readme-blocks.js";
import { ShellSession } from "./helpers/shell-session.js";

/**
 * The README followed top to bottom, as a newcomer would: on a fresh clone (no data
 * directory), Hearth started as `npm start` starts it, then in one terminal every block the
 * README does not mark `<!-- readme-test: skip: why -->`, in order: shell blocks as they are,
 * the Node.js block saved as example.mjs and run with node, the Python one saved as
 * example.py and run with the client on PYTHONPATH, as the README says. Each must succeed
 * (curl with --fail-with-body, so an HTTP error fails it too).
 */

const README = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
const blocks = readmeBlocks(README);
const runnable = blocks.filter((b) => b.kind !== "text" && b.skip === undefined);

/** Where the README's examples send their requests: set once, where the test puts its own port. */
const README_URL = "http://127.0.0.1:8080";
const ADDRESS_LINE = `export HEARTH_BASE_URL=${README_URL}`;

/** Per block: the CLI's (six commands, a deploy and an undeploy) is the longest. */
const BLOCK_TIMEOUT_MS = 240_000;

describe("the README's blocks", () => {
  it("write the server's address in one place, the line that sets HEARTH_BASE_URL", () => {
    const lines = runnable.flatMap((b) => b.code.split("\n"));
    expect(lines.filter((l) => l.includes(":8080"))).toEqual([ADDRESS_LINE]);
    expect(lines.filter((l) => l.includes("localhost"))).toEqual([]);
    expect(runnable.map((b) => b.kind)).toEqual(expect.arrayContaining(["sh", "js", "python"]));
  });

  it("are read with their markers, and a block the test cannot place is refused", () => {
    const md = [
      "<!-- readme-test: skip: needs a GPU -->",
      "",
      "```sh",
      "nvidia-smi",
      "```",
      "```text",
      "output",
      "```",
      "````python",
      "print('```')",
      "````",
    ].join("\n");
    expect(readmeBlocks(md)).toEqual([
      { line: 3, kind: "sh", code: "nvidia-smi", skip: "needs a GPU" },
      { line: 6, kind: "text", code: "output", skip: undefined },
      { line: 9, kind: "python", code: "print('```')", skip: undefined },
    ]);
    expect(() => readmeBlocks("```\nnpm start\n```")).toThrow(/line 1: a block tagged "": tag it sh, js or python/);
    expect(() => readmeBlocks("<!-- readme-test: skip: later -->\ntext\n```sh\nls\n```")).toThrow(
      /line 1: the marker is not followed by a block/,
    );
    expect(() => readmeBlocks("<!-- readme-test: skip: -->\n```sh\nls\n```")).toThrow(/line 1: say why/);
    expect(() => readmeBlocks("```sh\nls\n")).toThrow(/line 1: the block is never closed/);
  });
});

describe("the README, followed top to bottom on a fresh clone", () => {
  let clone: Awaited<ReturnType<typeof freshClone>>;
  let scratch: string;
  let hearth: StartedHearth;
  let shell: ShellSession;
  let url: string;
  let failedAt: number | undefined;

  beforeAll(async () => {
    clone = await freshClone();
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-readme-"));
    hearth = await startNpmStart({}, { cwd: clone.dir, dataDir: path.join(clone.dir, "data") });
    url = `http://127.0.0.1:${hearth.port}`;
    await fs.writeFile(path.join(scratch, ".curlrc"), "fail-with-body\n");
    shell = new ShellSession(clone.dir, terminalEnv(scratch), scratch);
  }, 180_000);

  afterAll(async () => {
    await shell?.close();
    await hearth?.close();
    await clone?.remove();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  }, 60_000);

  it("starts with the ready line the README shows, with the clone's key file", async () => {
    const shown = blocks.find((b) => b.kind === "text" && b.code.startsWith("Hearth is ready:"));
    expect(shown, "the README shows npm start's ready line").toBeDefined();
    await eventually(async () => expect(hearth.output()).toContain(shown!.code.replaceAll(README_URL, url)));
  });

  for (const block of runnable) {
    it(
      `runs the ${block.kind} block at README line ${block.line}`,
      async () => {
        if (failedAt !== undefined) throw new Error(`not run: the block at line ${failedAt} failed`);
        try {
          await run(block);
        } catch (error) {
          failedAt = block.line;
          throw new Error(`README line ${block.line}: ${(error as Error).message}`);
        }
      },
      BLOCK_TIMEOUT_MS + 10_000,
    );
  }

  async function run(block: ReadmeBlock): Promise<void> {
    const code = block.code.replaceAll(README_URL, url);
    if (block.kind === "sh") {
      await shell.run(code, BLOCK_TIMEOUT_MS);
    } else if (block.kind === "js") {
      await fs.writeFile(path.join(clone.dir, "example.mjs"), code);
      await shell.run("node example.mjs", BLOCK_TIMEOUT_MS);
    } else if (block.kind === "python") {
      await fs.writeFile(path.join(clone.dir, "example.py"), code);
      await shell.run("PYTHONPATH=clients/python python3 example.py", BLOCK_TIMEOUT_MS);
    }
  }
});

/**
 * A newcomer's second terminal: none of the developer's Hearth, npm or test settings; the CLI's
 * config under `scratch`; curl failing on an HTTP error; npx never reaching the registry (the
 * name `hearth` there is someone else's).
 */
function terminalEnv(scratch: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(HEARTH_|npm_|OPENAI_|VITEST)/.test(name)) delete env[name];
  }
  for (const name of ["PORT", "HOST", "DATABASE_URL", "REDIS_URL", "SERVICE_API_KEY", "NODE_OPTIONS", "NODE_ENV"])
    delete env[name];
  return {
    ...env,
    HEARTH_CONFIG_DIR: path.join(scratch, "config"),
    CURL_HOME: scratch,
    NO_COLOR: "1",
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
  };
}
