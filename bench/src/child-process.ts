import { spawn, type ChildProcess } from "node:child_process";

/** The children not yet exited: killed when the bench exits, however it exits. */
const live = new Set<ChildProcess>();
let cleanupInstalled = false;

/**
 * A bench that dies (an uncaught error, Ctrl-C) must not leave its Hearth processes running:
 * clusters left by crashed runs take CPU from every later run on the machine.
 */
function killChildrenOnExit(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const killAll = () => {
    for (const child of live) child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
}

/**
 * One program run by the bench (a Hearth process, or a server it is compared with), its output
 * kept (the last few kilobytes) to explain a failure, stopped with SIGTERM so it shuts down in
 * order, and killed with the bench however the bench exits.
 */
export class BenchChild {
  private output = "";
  private ended = false;
  private exited: Promise<number | null>;

  protected constructor(
    readonly role: string,
    private readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString("utf8")).slice(-8_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    live.add(child);
    this.exited = new Promise((resolve) => {
      const end = (code: number | null) => {
        this.ended = true;
        live.delete(child);
        resolve(code);
      };
      child.once("exit", end);
      // A program that could not start (spawn's ENOENT, EACCES) emits "error" and no "exit".
      child.once("error", (error) => {
        this.output += `\n${error.message}`;
        if (child.pid === undefined) end(null);
      });
    });
  }

  /** `command args…`, e.g. a llama.cpp server binary. */
  static program(role: string, command: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): BenchChild {
    killChildrenOnExit();
    return new BenchChild(role, spawn(command, args, { env: options.env, stdio: ["ignore", "pipe", "pipe"] }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return !this.ended && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the process printed last, for error messages. */
  get recentOutput(): string {
    return this.output.trim();
  }

  failure(what: string): Error {
    const state = this.running ? "is running" : `exited (${this.child.exitCode ?? this.child.signalCode})`;
    return new Error(`${what}: the ${this.role} process ${state}. Its last output:\n${this.recentOutput || "(none)"}`);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * One Hearth process (API or worker) run by the bench: `node --import tsx <entry>`; SIGTERM
 * lets it write its CPU profile when asked for one.
 */
export class HearthChild extends BenchChild {
  static spawn(
    role: string,
    entry: string,
    options: { cwd: string; env: NodeJS.ProcessEnv; nodeArgs?: string[] },
  ): HearthChild {
    killChildrenOnExit();
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", "tsx", entry], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new HearthChild(role, child);
  }
}
