import type {
  ContextOptions,
  Engine,
  EngineAdapter,
  EngineContext,
  EngineModel,
  GenerateRequest,
  GenerateResult,
  LoadModelOptions,
} from "../../src/workers/engine/engine.js";

/**
 * An engine without llama.cpp, for unit tests of the worker's bookkeeping: models and
 * contexts record what happens to them, adapter loads can be held open or made to fail.
 */
export class FakeEngine implements Engine {
  readonly backend = "cpu";
  readonly models: FakeModel[] = [];
  /** Adapter paths whose load fails. */
  readonly failing = new Set<string>();
  /** While set, adapter loads wait for it. */
  hold: Promise<void> | undefined;
  /** Makes the next loadModel calls fail. */
  failLoads = 0;

  /** Templates never render here: nothing to share. */
  shareTemplateQuarantine(): void {}

  async loadModel(options: LoadModelOptions): Promise<EngineModel> {
    if (this.failLoads > 0) {
      this.failLoads--;
      throw new Error("out of memory (fake)");
    }
    const model = new FakeModel(options.id, this, this.models.length);
    this.models.push(model);
    return model;
  }

  /** Every adapter loaded so far, in order. */
  get adapters(): FakeAdapter[] {
    return this.models.flatMap((m) => m.adapters);
  }

  async close(): Promise<void> {}
}

export class FakeModel implements EngineModel {
  readonly info = { trainContextLength: 2048, embeddingLength: 4, vocabularySize: 257, hasChatTemplate: false };
  readonly contexts: FakeContext[] = [];
  readonly adapters: FakeAdapter[] = [];
  disposed = false;

  constructor(
    readonly id: string,
    private readonly engine: FakeEngine,
    /** Which loadModel call made it (0 for the first). */
    readonly serial: number,
  ) {}

  tokenize(text: string): number[] {
    return [...Buffer.from(text)];
  }

  async renderChat(): Promise<never> {
    throw new Error("not faked");
  }

  async createContext(options: ContextOptions): Promise<EngineContext> {
    if (this.disposed) throw new Error("model disposed");
    const context = new FakeContext(this, options.contextSize, options.adapters ?? false, options.sequences);
    this.contexts.push(context);
    return context;
  }

  async loadAdapter(path: string): Promise<EngineAdapter> {
    if (this.disposed) throw new Error("model disposed");
    await this.engine.hold;
    if (this.engine.failing.has(path)) throw new Error(`cannot load ${path}`);
    const adapter = new FakeAdapter(path);
    this.adapters.push(adapter);
    return adapter;
  }

  async embed(): Promise<never> {
    throw new Error("not faked");
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

export class FakeContext implements EngineContext {
  disposed = false;

  constructor(
    readonly model: FakeModel,
    readonly contextSize: number,
    /** Created to serve adapters. */
    readonly adapters: boolean,
    readonly sequences = 1,
  ) {}

  async generate(
    request: GenerateRequest,
    _signal: AbortSignal,
    onText: (text: string) => void,
  ): Promise<GenerateResult> {
    if (this.disposed || this.model.disposed) throw new Error("generating on a disposed context");
    if (request.adapter && !this.adapters) throw new Error("an adapter on a context not made for adapters");
    if ((request.adapter as FakeAdapter | undefined)?.disposed) throw new Error("generating with a freed adapter");
    const counts = { promptTokens: request.promptTokens.length, cachedTokens: 0, completionTokens: 0 };
    request.progress?.(counts);
    request.progress?.({ ...counts, completionTokens: 1 });
    onText(request.adapter?.path ?? "base");
    return { finishReason: "stop", ...counts, completionTokens: 1 };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

export class FakeAdapter implements EngineAdapter {
  disposed = false;

  constructor(readonly path: string) {}

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

/** A promise to resolve from outside. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
