import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { BenchChild } from "./child-process.js";
import { freePort } from "./free-port.js";

/**
 * llama.cpp's own server (`llama-server`), which the versus scenario runs beside Hearth on the
 * same GGUF: started on a free port of 127.0.0.1, ready once its /health answers 200, stopped
 * (and killed with the bench, however the bench exits) by BenchChild.
 */

/** How `--versus` names the server it compares Hearth with: `llama-server=PATH`. */
const VERSUS_PREFIX = "llama-server=";

/**
 * The binary `--versus llama-server=PATH` names, as an absolute path; a message saying what is
 * wrong (no such file, not executable, another form) otherwise.
 */
export function llamaServerBinary(spec: string): { path: string } | { error: string } {
  if (!spec.startsWith(VERSUS_PREFIX) || spec.length === VERSUS_PREFIX.length)
    return { error: `--versus must be llama-server=PATH (the llama.cpp server binary), not ${JSON.stringify(spec)}` };
  const file = path.resolve(spec.slice(VERSUS_PREFIX.length));
  try {
    if (!statSync(file).isFile()) return { error: `--versus: ${file} is not a file` };
  } catch {
    return { error: `--versus: ${file} does not exist (docs/bench-versus.md says how to build llama-server)` };
  }
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return { error: `--versus: ${file} is not executable` };
  }
  return { path: file };
}

export interface LlamaServerSettings {
  binary: string;
  model: string;
  /** Threads of generation and of prompt evaluation (-t, -tb): the worker's. */
  threads: number;
  /** Slots (--parallel): the sequences of the worker's context. */
  slots: number;
  /** Tokens of context each slot holds: -c is slots × this, as node-llama-cpp gives each sequence its own. */
  slotContext: number;
  /** Layers on the GPU (--n-gpu-layers): the worker's; 0 where the worker computes on the CPU. */
  gpuLayers: number;
}

const READY_TIMEOUT_MS = 120_000;

export class LlamaServer {
  private constructor(
    private readonly child: BenchChild,
    readonly url: string,
    readonly args: string[],
  ) {}

  /** Starts the server and waits until it answers /health with 200 (the model loaded). */
  static async start(settings: LlamaServerSettings): Promise<LlamaServer> {
    const port = await freePort();
    const args = [
      ...["--model", settings.model, "--host", "127.0.0.1", "--port", String(port)],
      ...["--threads", String(settings.threads), "--threads-batch", String(settings.threads)],
      ...["--parallel", String(settings.slots), "--ctx-size", String(settings.slots * settings.slotContext)],
      ...["--n-gpu-layers", String(settings.gpuLayers)],
      "--cont-batching",
      "--no-webui",
    ];
    const child = BenchChild.program("llama-server", settings.binary, args);
    const server = new LlamaServer(child, `http://127.0.0.1:${port}`, args);
    try {
      await server.ready();
    } catch (error) {
      await child.stop(5_000);
      throw error;
    }
    return server;
  }

  /** What `llama-server --version` prints: its build number, commit and compiler. */
  static async version(binary: string): Promise<string> {
    const { stdout, stderr } = await promisify(execFile)(binary, ["--version"], { timeout: 30_000 });
    return `${stdout}${stderr}`
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean)
      .join("; ");
  }

  get pid(): number {
    return this.child.pid;
  }

  async stop(): Promise<void> {
    await this.child.stop(10_000);
  }

  private async ready(): Promise<void> {
    const deadline = performance.now() + READY_TIMEOUT_MS;
    while (performance.now() < deadline) {
      if (!this.child.running) throw this.child.failure("llama-server did not start");
      // 503 while the model loads; refused before the socket listens.
      const status = await fetch(`${this.url}/health`).then(
        async (res) => {
          await res.arrayBuffer();
          return res.status;
        },
        () => 0,
      );
      if (status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw this.child.failure(`llama-server did not answer /health within ${READY_TIMEOUT_MS / 1000} s`);
  }
}
