import type { EngineAdapter, EngineContext, GenerateRequest, GenerateResult, OnText } from "./engine/engine.js";

/**
 * Several contexts of one model behind the EngineContext interface. Each request goes to the
 * context with the fewest requests in flight (its sequences are then batched together by that
 * context), except that a request with an adapter goes where that adapter already runs, while
 * that context has a free sequence: its batches then need no switch of adapter.
 */
export class ContextPool implements EngineContext {
  private readonly load: number[];
  /** Requests in flight per context and adapter. */
  private readonly running: Map<EngineAdapter, number>[];

  constructor(private readonly contexts: readonly EngineContext[]) {
    if (contexts.length === 0) throw new Error("a context pool needs at least one context");
    this.load = contexts.map(() => 0);
    this.running = contexts.map(() => new Map());
  }

  get contextSize(): number {
    return Math.min(...this.contexts.map((c) => c.contextSize));
  }

  get sequences(): number {
    return this.contexts.reduce((sum, c) => sum + c.sequences, 0);
  }

  async generate(request: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult> {
    const pick = this.pick(request.adapter);
    const { adapter } = request;
    this.load[pick]!++;
    if (adapter) this.running[pick]!.set(adapter, (this.running[pick]!.get(adapter) ?? 0) + 1);
    try {
      return await this.contexts[pick]!.generate(request, signal, onText);
    } finally {
      this.load[pick]!--;
      if (adapter) {
        const left = this.running[pick]!.get(adapter)! - 1;
        if (left === 0) this.running[pick]!.delete(adapter);
        else this.running[pick]!.set(adapter, left);
      }
    }
  }

  private pick(adapter: EngineAdapter | undefined): number {
    let pick = -1;
    if (adapter) {
      for (let i = 0; i < this.contexts.length; i++) {
        const free = this.load[i]! < this.contexts[i]!.sequences;
        if (free && this.running[i]!.has(adapter) && (pick === -1 || this.load[i]! < this.load[pick]!)) pick = i;
      }
      if (pick !== -1) return pick;
    }
    pick = 0;
    for (let i = 1; i < this.contexts.length; i++) {
      const fewer = this.load[i]! < this.load[pick]!;
      const asFewerAdapters = this.load[i] === this.load[pick] && this.running[i]!.size < this.running[pick]!.size;
      if (fewer || asFewerAdapters) pick = i;
    }
    return pick;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.contexts.map((c) => c.dispose()));
  }
}
