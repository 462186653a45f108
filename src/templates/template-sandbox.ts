import { Worker } from "node:worker_threads";
import type { RenderReply, RenderRequest, TemplateTextJSON, TemplateTurn } from "./template-protocol.js";

/**
 * Where users' Jinja chat templates run: a few worker threads, each with a capped heap, and
 * a time limit per render after which the thread is killed and replaced. A template that
 * loops for ever, or builds a gigabyte string, fails its own request and nobody else's; the
 * process's main thread never renders one (docs/security.md).
 */

export interface TemplateSandboxOptions {
  /** Threads rendering at once; a slow template holds one of them up to timeoutMs. */
  threads: number;
  timeoutMs: number;
  /** Heap of each thread (V8's old generation), in MB. */
  memoryMb: number;
  /** Most characters a rendered prompt may have. */
  maxChars?: number;
  /** Renders that may wait for a thread; more are refused at once. */
  maxWaiting?: number;
}

export interface RenderedTemplate {
  text: TemplateTextJSON;
  stops: TemplateTextJSON[];
}

/**
 * Why a render failed. `template`: the template's own error (syntax, raise_exception);
 * `time`, `memory`, `size`: it went past a bound; `unavailable`: the sandbox could not take it.
 */
export class TemplateError extends Error {
  constructor(
    readonly kind: "template" | "time" | "memory" | "size" | "unavailable",
    message: string,
  ) {
    super(message);
    this.name = "TemplateError";
  }

  /** True when the template went past one of the sandbox's bounds. */
  get outOfBounds(): boolean {
    return this.kind === "time" || this.kind === "memory" || this.kind === "size";
  }
}

export const DEFAULT_MAX_TEMPLATE_CHARS = 4 * 1024 * 1024;

/** The defaults of HEARTH_TEMPLATE_* (config-variables.ts). */
export const DEFAULT_TEMPLATE_LIMITS: TemplateSandboxOptions = Object.freeze({
  threads: 2,
  timeoutMs: 1000,
  memoryMb: 64,
});

interface Task {
  request: Omit<RenderRequest, "id">;
  resolve: (rendered: RenderedTemplate) => void;
  reject: (error: TemplateError) => void;
}

export class TemplateSandbox {
  private readonly slots: Slot[];
  private readonly waiting: Task[] = [];
  private readonly maxChars: number;
  private readonly maxWaiting: number;
  private closed = false;

  constructor(readonly options: TemplateSandboxOptions) {
    this.maxChars = options.maxChars ?? DEFAULT_MAX_TEMPLATE_CHARS;
    this.maxWaiting = options.maxWaiting ?? 1024;
    this.slots = Array.from({ length: options.threads }, () => new Slot(this.options, () => this.pump()));
  }

  /** Starts every thread now rather than on the first render (a worker does this at start). */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.start()));
  }

  render(template: string, messages: readonly TemplateTurn[]): Promise<RenderedTemplate> {
    if (this.closed) return Promise.reject(new TemplateError("unavailable", "The template sandbox is closed."));
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(new TemplateError("unavailable", "Too many chat templates are waiting to be rendered."));
    }
    return new Promise<RenderedTemplate>((resolve, reject) => {
      this.waiting.push({ request: { template, messages, maxChars: this.maxChars }, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.waiting.splice(0))
      task.reject(new TemplateError("unavailable", "The template sandbox closed."));
    await Promise.all(this.slots.map((slot) => slot.stop()));
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.waiting.length === 0 || this.closed) return;
      if (slot.idle) slot.run(this.waiting.shift()!);
      else if (slot.failedToStart !== undefined) {
        // No thread will start: fail what waits rather than leave it waiting.
        const error = new TemplateError("unavailable", `The template sandbox could not start: ${slot.failedToStart}`);
        for (const task of this.waiting.splice(0)) task.reject(error);
        slot.failedToStart = undefined;
      } else slot.start().catch(() => this.pump());
    }
  }
}

/** One thread: started on demand, replaced after a timeout, a crash or running out of heap. */
class Slot {
  private worker: Worker | undefined;
  private starting: Promise<void> | undefined;
  private task: { task: Task; timer: NodeJS.Timeout } | undefined;
  private nextId = 1;
  failedToStart: string | undefined;

  constructor(
    private readonly options: TemplateSandboxOptions,
    private readonly onIdle: () => void,
  ) {}

  get idle(): boolean {
    return this.worker !== undefined && this.starting === undefined && this.task === undefined;
  }

  start(): Promise<void> {
    if (this.worker && !this.starting) return Promise.resolve();
    this.starting ??= new Promise<void>((resolve, reject) => {
      const worker = spawnThread(this.options.memoryMb);
      this.worker = worker;
      worker.unref();
      const failed = (error: Error) => {
        this.worker = undefined;
        this.starting = undefined;
        this.failedToStart = error.message;
        reject(error);
        this.onIdle();
      };
      worker.once("error", failed);
      worker.once("message", () => {
        worker.off("error", failed);
        this.starting = undefined;
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

  run(task: Task): void {
    const worker = this.worker!;
    const timer = setTimeout(() => {
      this.fail(
        worker,
        new TemplateError(
          "time",
          `The chat template took longer than ${this.options.timeoutMs} ms to render and was stopped.`,
        ),
      );
    }, this.options.timeoutMs);
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
    if (reply.ok) task.resolve({ text: reply.text, stops: reply.stops });
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
            `The chat template needed more than ${this.options.memoryMb} MB of memory to render and was stopped.`,
          )
        : new TemplateError("unavailable", `The template sandbox's thread failed: ${error.message}`),
    );
  }

  /** Fails the running render, kills the thread and starts another in its place. */
  private fail(worker: Worker, error: TemplateError): void {
    if (worker !== this.worker) return;
    if (this.task) {
      clearTimeout(this.task.timer);
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
