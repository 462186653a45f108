import type { TemplateLimits } from "../config/template-limits.js";
import type { ToolFunction } from "../domain/generation.js";
import type { TemplateTurn } from "./template-protocol.js";
import { TemplateError } from "./template-error.js";
import { quarantineMessage, templateHash, TemplateQuarantine } from "./template-quarantine.js";
import { SandboxThread, type RenderedTemplate, type RenderTask } from "./sandbox-thread.js";

/**
 * Where users' Jinja chat templates run: a few worker threads, each with a capped heap, and
 * a time limit per render after which the thread is killed and replaced. A template that
 * loops for ever, or builds a gigabyte string, fails its own request and nobody else's; the
 * process's main thread never renders one (docs/security.md).
 *
 * The threads are shared between owners (accounts) fairly: one owner's renders hold at most
 * `maxPerOwner` threads (replacements of threads its renders killed included), and the renders
 * waiting are taken one owner after another. A template that went past the time or memory
 * bound is quarantined (template-quarantine.ts): refused at once, without a thread, for a while,
 * by this process and, once `quarantine.share` is called, by every other.
 */

/** The operator's bounds (HEARTH_TEMPLATE_*, config/template-limits.ts) and the sandbox's own. */
export interface TemplateSandboxOptions extends TemplateLimits {
  /** Threads one owner's renders may hold at once; by default all but one (at least one). */
  maxPerOwner?: number;
  /** Most characters a rendered prompt may have. */
  maxChars?: number;
  /** Renders one owner may have waiting for a thread; more are refused at once. */
  maxWaiting?: number;
}

export type { RenderedTemplate };

export const DEFAULT_MAX_TEMPLATE_CHARS = 4 * 1024 * 1024;

export class TemplateSandbox {
  private readonly threads: SandboxThread[];
  /** Renders waiting, by owner; the map's order is the order owners are served in. */
  private readonly waiting = new Map<string, RenderTask[]>();
  private readonly maxChars: number;
  private readonly maxWaiting: number;
  private readonly maxPerOwner: number;
  readonly quarantine: TemplateQuarantine;
  private closed = false;

  constructor(readonly options: TemplateSandboxOptions) {
    this.maxChars = options.maxChars ?? DEFAULT_MAX_TEMPLATE_CHARS;
    this.maxWaiting = options.maxWaiting ?? 256;
    this.maxPerOwner = options.maxPerOwner ?? Math.max(1, options.threads - 1);
    this.quarantine = new TemplateQuarantine(options.quarantineMs);
    this.threads = Array.from({ length: options.threads }, () => new SandboxThread(options, () => this.pump()));
  }

  /** Starts every thread now rather than on the first render (a worker does this at start). */
  async warm(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.start()));
  }

  /** Renders `template` (owned by `owner`, an account) on a thread. */
  render(
    template: string,
    messages: readonly TemplateTurn[],
    owner: string,
    tools?: readonly ToolFunction[],
  ): Promise<RenderedTemplate> {
    if (this.closed) return Promise.reject(new TemplateError("unavailable", "The template sandbox is closed."));
    const hash = templateHash(template);
    const quarantined = this.quarantined(hash);
    if (quarantined) return Promise.reject(quarantined);
    const queue = this.waiting.get(owner) ?? [];
    if (queue.length >= this.maxWaiting) {
      return Promise.reject(
        new TemplateError("unavailable", "Too many of this account's chat templates are waiting to be rendered."),
      );
    }
    return new Promise<RenderedTemplate>((resolve, reject) => {
      queue.push({
        request: { template, messages, ...(tools && tools.length > 0 ? { tools } : {}), maxChars: this.maxChars },
        owner,
        hash,
        resolve,
        reject: (error) => {
          if (error.kind === "time" || error.kind === "memory")
            this.quarantine.record(hash, boundPassed(error, this.options));
          reject(error);
        },
      });
      this.waiting.set(owner, queue);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.waiting.values())
      for (const task of queue) task.reject(new TemplateError("unavailable", "The template sandbox closed."));
    this.waiting.clear();
    await Promise.all(this.threads.map((thread) => thread.stop()));
  }

  private quarantined(hash: string): TemplateError | undefined {
    const entry = this.quarantine.known(hash);
    return entry && new TemplateError("quarantined", quarantineMessage(entry));
  }

  private pump(): void {
    for (const thread of this.threads) {
      if (this.waiting.size === 0 || this.closed) return;
      if (thread.idle) {
        const task = this.next();
        if (!task) return;
        thread.run(task);
      } else if (thread.failedToStart !== undefined) {
        // No thread will start: fail what waits rather than leave it waiting.
        const error = new TemplateError("unavailable", `The template sandbox could not start: ${thread.failedToStart}`);
        for (const queue of this.waiting.values()) for (const task of queue) task.reject(error);
        this.waiting.clear();
        thread.failedToStart = undefined;
      } else thread.start().catch(() => this.pump());
    }
  }

  /**
   * The next render to run: the first waiting owner (in turn) below its share of threads. The
   * renders of templates quarantined while they waited are refused on the way.
   */
  private next(): RenderTask | undefined {
    for (const [owner, queue] of this.waiting) {
      for (let i = queue.length - 1; i >= 0; i--) {
        const refused = this.quarantined(queue[i]!.hash);
        if (refused) queue.splice(i, 1)[0]!.reject(refused);
      }
      if (queue.length === 0) {
        this.waiting.delete(owner);
        continue;
      }
      if (this.held(owner) >= this.maxPerOwner) continue;
      const task = queue.shift()!;
      // The owner goes to the back of the line.
      this.waiting.delete(owner);
      if (queue.length > 0) this.waiting.set(owner, queue);
      return task;
    }
    return undefined;
  }

  private held(owner: string): number {
    return this.threads.filter((thread) => thread.chargedTo === owner).length;
  }
}

/** The bound a render went past, as a quarantine's reason. */
function boundPassed(error: TemplateError, options: TemplateSandboxOptions): string {
  return error.kind === "time"
    ? `took longer than ${options.timeoutMs} ms to render`
    : `needed more than ${options.memoryMb} MB of memory to render`;
}
