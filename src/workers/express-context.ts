import type { EngineContext, GenerateRequest, GenerateResult, OnText } from "./engine/engine.js";

/**
 * A base model's shared context(s) with a context of their own for express requests (fair
 * scheduling's express lane: the request of an account with nothing else in flight,
 * docs/security.md). An express request runs on the express context while it has a free
 * sequence: its decodes then never wait for a step of the shared context's sequences, nor for
 * their samplings (node-llama-cpp decodes one batch of a context at a time, and starts the next
 * only once every sequence of the last has sampled its token); the two contexts decode side by
 * side. When the express context is full, an express request waits on the shared context,
 * ahead of the others there.
 */
export class ExpressContext implements EngineContext {
  private running = 0;

  constructor(
    private readonly shared: EngineContext,
    private readonly express: EngineContext,
  ) {}

  get contextSize(): number {
    return Math.min(this.shared.contextSize, this.express.contextSize);
  }

  get sequences(): number {
    return this.shared.sequences;
  }

  async generate(request: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult> {
    if (request.express !== true || this.running >= this.express.sequences) {
      return this.shared.generate(request, signal, onText);
    }
    this.running++;
    try {
      return await this.express.generate(request, signal, onText);
    } finally {
      this.running--;
    }
  }

  async dispose(): Promise<void> {
    await Promise.all([this.shared.dispose(), this.express.dispose()]);
  }
}
