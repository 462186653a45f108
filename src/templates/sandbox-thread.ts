import { Worker } from "node:worker_threads";
import type { RenderReply, RenderRequest, TemplateTextJSON, ToolCallFormat } from "./template-protocol.js";
import { TemplateError } from "./template-error.js";

/** The bounds of one thread (template-sandbox.ts's options). */
export interface ThreadBounds {
  timeoutMs: number;
  /** Heap of the thread (V8's old generation), in MB. */
  memoryMb: number;
}

export interface RenderedTemplate {
  text: TemplateTextJSON;
  stops: TemplateTextJSON[];
  toolCallFormat?: ToolCallFormat;
}

/** A render waiting for, or running on, a thread. */
export interface RenderTask {
  request: Omit<RenderRequest, "id">;
  /** Whose template it is: the sandbox shares its threads between owners. */
  owner: string;
  /** The template's quarantine key (template-quarantine.ts). */
  hash: string;
  resolve: (rendered: RenderedTemplate) => void;
  reject: (error: TemplateError) => void;
}

/**
 * One thread of the sandbox: started on demand, replaced after a timeout, a crash or running
 * out of heap. A thread being replaced after a render went past a bound stays charged to that
 * render's owner until its successor is ready, so that an owner whose templates keep killing
 * threads never holds more than its share of them, replacements included.
 */
export class SandboxThread {
  private worker: Worker | undefined;
  private starting: Promise<void> | undefined;
  private task: { task: RenderTask; timer: NodeJS.Timeout } | undefined;
  private replacingFor: string | undefined;
  private nextId = 1;
  failedToStart: string | undefined;

  constructor(
    private readonly bounds: ThreadBounds,
    private readonly onIdle: () => void,
  ) {}

  get idle(): boolean {
    return this.worker !== undefined && this.starting === undefined && this.task === undefined;
  }

  /** The owner this thread counts against: its render's, or the one whose render it is replacing. */
  get chargedTo(): string | undefined {
    return this.task?.task.owner ?? this.replacingFor;
  }

  start(): Promise<void> {
    if (this.worker && !this.starting) return Promise.resolve();
    this.starting ??= new Promise<void>((resolve, reject) => {
      const worker = spawnThread(this.bounds.memoryMb);
      this.worker = worker;
      worker.unref();
      const failed = (error: Error) => {
        this.worker = undefined;
        this.starting = undefined;
        this.replacingFor = undefined;
        this.failedToStart = error.message;
        reject(error);
        this.onIdle();
      };
      worker.once("error", failed);
      worker.once("message", () => {
        worker.off("error", failed);
        this.starting = undefined;
        this.replacingFor = undefined;
        this.failedToStart = undefined;
        worker.on("message", (reply: RenderReply) => this.settle(worker, reply));
        worker.on("error", (error: Error & { code?: string }) => this.crashed(worker, error));
        worker.on("exit", () => this.crashed(worker, new Error("the thread exited")));
        resolve();
        this.onIdle();
      });
    });
    return this.starting;
  }

  run(task: RenderTask): void {
    const worker = this.worker!;
    const timer = setTimeout(() => {
      this.fail(
        worker,
        new TemplateError(
          "time",
          `The chat template took longer than ${this.bounds.timeoutMs} ms to render and was stopped.`,
        ),
      );
    }, this.bounds.timeoutMs);
    this.task = { task, timer };
    worker.postMessage({ ...task.request, id: this.nextId++ } satisfies RenderRequest);
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (this.task) {
      clearTimeout(this.task.timer);
      this.task.task.reject(new TemplateError("unavailable", "The template sandbox closed."));
      this.task = undefined;
    }
    await worker?.terminate();
  }

  private settle(worker: Worker, reply: RenderReply): void {
    if (worker !== this.worker || !this.task) return;
    const { task, timer } = this.task;
    clearTimeout(timer);
    this.task = undefined;
    if (reply.ok) task.resolve({ text: reply.text, stops: reply.stops, toolCallFormat: reply.toolCallFormat });
    else if (reply.kind === "bounds")
      task.reject(new TemplateError("size", `The chat template's output is too large: ${reply.message}.`));
    else task.reject(new TemplateError("template", reply.message));
    this.onIdle();
  }

  private crashed(worker: Worker, error: Error & { code?: string }): void {
    if (worker !== this.worker) return;
    const outOfMemory = error.code === "ERR_WORKER_OUT_OF_MEMORY";
    this.fail(
      worker,
      outOfMemory
        ? new TemplateError(
            "memory",
            `The chat template needed more than ${this.bounds.memoryMb} MB of memory to render and was stopped.`,
          )
        : new TemplateError("unavailable", `The template sandbox's thread failed: ${error.message}`),
    );
  }

  /** Fails the running render, kills the thread and starts another in its place. */
  private fail(worker: Worker, error: TemplateError): void {
    if (worker !== this.worker) return;
    if (this.task) {
      clearTimeout(this.task.timer);
      this.replacingFor = this.task.task.owner;
      this.task.task.reject(error);
      this.task = undefined;
    }
    this.worker = undefined;
    worker.removeAllListeners();
    worker.on("error", () => {});
    void worker.terminate();
    this.start().catch(() => {});
  }
}

/** A sandbox thread. Run from TypeScript sources (tsx, vitest), the thread registers tsx itself. */
function spawnThread(memoryMb: number): Worker {
  const resourceLimits = {
    maxOldGenerationSizeMb: memoryMb,
    maxYoungGenerationSizeMb: Math.min(16, memoryMb),
    stackSizeMb: 4,
  };
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = new URL(fromSources ? "./template-thread.ts" : "./template-thread.js", import.meta.url);
  if (!fromSources) return new Worker(entry, { resourceLimits });
  const boot = `import { register } from "tsx/esm/api"; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(boot, { eval: true, resourceLimits });
}
