import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const childProcessModule = path.resolve("bench/src/child-process.ts");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A bench that crashes takes its Hearth processes with it. */
describe("the bench's child processes", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-bench-child-"));
    await fs.writeFile(path.join(dir, "sleeper.ts"), "setInterval(() => {}, 1000);\n");
    await fs.writeFile(
      path.join(dir, "crashing-bench.ts"),
      `import { HearthChild } from ${JSON.stringify(childProcessModule)};\n` +
        `const child = HearthChild.spawn("sleeper", ${JSON.stringify(path.join(dir, "sleeper.ts"))}, { cwd: process.cwd(), env: process.env });\n` +
        "console.log(child.pid);\n" +
        'setTimeout(() => { throw new Error("the bench crashed"); }, 500);\n',
    );
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("are killed when the bench dies of an uncaught error", async () => {
    const bench = spawn(process.execPath, ["--import", "tsx", path.join(dir, "crashing-bench.ts")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    bench.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => bench.once("exit", resolve));
    const pid = Number(out.trim());
    expect(code).toBe(1);
    expect(pid).toBeGreaterThan(0);
    await expect.poll(() => alive(pid), { timeout: 5_000 }).toBe(false);
  });
});
