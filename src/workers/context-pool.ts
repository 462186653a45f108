import type { EngineContext, GenerateRequest, GenerateResult } from "./engine/engine.js";

/**
 * Several contexts of one model behind the EngineContext interface: each request
 * goes to the context with the fewest requests in flight (its sequences are then
 * batched together by that context).
 */
export class ContextPool implements EngineContext {
  private readonly load: number[];

  constructor(private readonly contexts: readonly EngineContext[]) {
    if (contexts.length === 0) throw new Error("a context pool needs at least one context");
    this.load = contexts.map(() => 0);
  }

  get contextSize(): number {
    return Math.min(...this.contexts.map((c) => c.contextSize));
  }

  async generate(
    request: GenerateRequest,
    signal: AbortSignal,
    onText: (text: string) => void,
  ): Promise<GenerateResult> {
    let pick = 0;
    for (let i = 1; i < this.contexts.length; i++) if (this.load[i]! < this.load[pick]!) pick = i;
    this.load[pick]!++;
    try {
      return await this.contexts[pick]!.generate(request, signal, onText);
    } finally {
      this.load[pick]!--;
    }
  }

  async dispose(): Promise<void> {
    await Promise.all(this.contexts.map((c) => c.dispose()));
  }
}
