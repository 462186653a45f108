import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";

/**
 * One bash, as a person's terminal: scripts run in it one after another, so what one sets
 * (`export`, a variable) the next one sees. Each runs under `set -eo pipefail` with stdin
 * closed (never a terminal), its output captured on its own; a failing command ends the
 * shell, and the run with it. The shell leads its own process group, which close() ends.
 */
export class ShellSession {
  private readonly child: ChildProcess;
  private control = "";
  private runs = 0;
  private readonly exited: Promise<number | null>;

  constructor(
    readonly cwd: string,
    env: NodeJS.ProcessEnv,
    /** Where the scripts and their outputs are written (not in `cwd`). */
    private readonly scratch: string,
  ) {
    this.child = spawn("bash", ["--noprofile", "--norc"], {
      cwd,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout!.on("data", (d: Buffer) => (this.control += d));
    this.child.stderr!.on("data", (d: Buffer) => (this.control += d));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdin!.on("error", () => {}); // a shell that has ended: run() says so
    this.child.stdin!.write("set -eo pipefail\n");
  }

  /** Runs `script`; resolves to its output, or rejects with it when a command fails or time runs out. */
  async run(script: string, timeoutMs: number): Promise<string> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error("the shell has ended");
    const n = ++this.runs;
    const file = path.join(this.scratch, `script-${n}.sh`);
    const output = path.join(this.scratch, `output-${n}.txt`);
    await fs.writeFile(file, `${script}\n`);
    const done = `__script ${n} done__`;
    this.child.stdin!.write(`source '${file}' < /dev/null > '${output}' 2>&1\necho '${done}'\n`);
    const read = () => fs.readFile(output, "utf8").catch(() => "");
    const deadline = Date.now() + timeoutMs;
    while (!this.control.includes(done)) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`exit code ${this.child.exitCode ?? this.child.signalCode}; its output:\n${await read()}`);
      }
      if (Date.now() > deadline) {
        await this.close();
        throw new Error(`still running after ${timeoutMs / 1000} s; its output:\n${await read()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return read();
  }

  /** Ends the shell and anything it started. */
  async close(): Promise<void> {
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      // ESRCH: the shell and all it started are gone.
    }
    await this.exited;
  }
}
