import { AppError } from "../errors.js";
import type { Config } from "../config.js";
import { AdapterContexts, type AdapterContextsHooks } from "./adapter-contexts.js";
import { ContextPool } from "./context-pool.js";
import { ExpressContext } from "./express-context.js";
import type {
  ContextOptions,
  Engine,
  EngineAdapter,
  EngineContext,
  EngineModel,
  GenerateRequest,
  GenerateResult,
  OnText,
} from "./engine/engine.js";
import type { InferenceTarget } from "./inference-handler.js";

/** A model object and context held for one request; release it when the request ends. */
export interface InferenceLease extends InferenceTarget {
  release(): void;
}

/**
 * How much a model object holds, by the worker's settings' names (config.ts `worker`):
 * `contextsPerModel` base contexts of `sequencesPerContext` sequences (requests go to the least
 * busy one), an express context of `expressSequences` (0: none), `adapterContexts` contexts of
 * `adapterSequences` that all the adapters share (each batch one adapter's sequences, created on
 * first use), each context `contextSize` tokens a sequence on `threads` threads, and at most
 * `maxAdapters` adapters loaded.
 */
export type ModelCapacity = Pick<
  Config["worker"],
  | "contextsPerModel"
  | "sequencesPerContext"
  | "expressSequences"
  | "adapterContexts"
  | "adapterSequences"
  | "contextSize"
  | "threads"
  | "maxAdapters"
>;

export interface ModelInstanceOptions extends ModelCapacity {
  engine: Engine;
  base: { id: string; path: string };
  /** The local file of an adapter key; throws an AppError when it cannot be had. */
  adapterPath(key: string): Promise<string>;
  hooks?: AdapterContextsHooks;
  /** Every decode of every context of this model (metrics). */
  onDecode?: ContextOptions["onDecode"];
  /** KV cells each context's idle sequences keep for reuse (HEARTH_PROMPT_CACHE_TOKENS; absent: all). */
  promptCacheTokens?: number | null;
  /** What every context's prompt cache of this model does (metrics). */
  onPromptCache?: ContextOptions["onPromptCache"];
}

/**
 * One model object of a base model (one "generation") with its base context(s), the
 * contexts its adapters share, and its loaded adapters. Counts the requests it serves, so
 * that once retired it is disposed only after the last of them ends.
 */
export class ModelInstance {
  readonly adapters: AdapterContexts;
  private adapterPool: Promise<EngineContext> | undefined;
  private inFlight = 0;
  private retiring: (() => void) | undefined;
  private retired: Promise<void> | undefined;

  private constructor(
    readonly generation: number,
    readonly model: EngineModel,
    private readonly base: EngineContext,
    options: ModelInstanceOptions,
  ) {
    this.adapters = new AdapterContexts((key) => this.openAdapter(key, options), options.maxAdapters, options.hooks);
  }

  static async create(options: ModelInstanceOptions, generation: number): Promise<ModelInstance> {
    const { engine, base, threads } = options;
    const model = await engine.loadModel({ id: base.id, path: base.path, threads });
    let context: EngineContext;
    try {
      context = await createBaseContext(model, options);
    } catch (error) {
      // The failure itself is what the caller sees.
      await model.dispose().catch(() => {});
      throw error;
    }
    return new ModelInstance(generation, model, context, options);
  }

  get contextSize(): number {
    return this.base.contextSize;
  }

  get requests(): number {
    return this.inFlight;
  }

  /**
   * The context for a request: the base one, or `adapterKey`'s (loaded on first use).
   * Counts the request at once, before any `await`.
   */
  async lease(adapterKey?: string, options: { wanted?: boolean } = {}): Promise<InferenceLease> {
    if (this.retired) throw new Error(`model object ${this.generation} of ${this.model.id} is retired`);
    this.inFlight++;
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      this.inFlight--;
      if (this.inFlight === 0) this.retiring?.();
    };
    if (adapterKey === undefined) return { model: this.model, context: this.base, release: done };
    try {
      const held = await this.adapters.acquire(adapterKey, options);
      return {
        model: this.model,
        context: held.context,
        release: () => {
          held.release();
          done();
        },
      };
    } catch (error) {
      done();
      throw error;
    }
  }

  /** Loads an adapter's weights; its requests run on the shared adapter contexts. */
  private async openAdapter(key: string, options: ModelInstanceOptions): Promise<EngineContext> {
    const adapterPath = await options.adapterPath(key);
    let adapter: EngineAdapter;
    try {
      adapter = await this.model.loadAdapter(adapterPath);
    } catch (cause) {
      throw new AppError(
        "internal",
        `llama.cpp could not load the adapter ${key} onto ${this.model.id} (${(cause as Error).message}): ` +
          "is it a GGUF LoRA made for this base model?",
        { cause },
      );
    }
    try {
      return new AdapterOnContexts(await this.sharedAdapterContexts(options), adapter);
    } catch (error) {
      await adapter.dispose().catch(() => {});
      throw error;
    }
  }

  /** The contexts every adapter of this model object shares, created on the first adapter's load. */
  private sharedAdapterContexts(options: ModelInstanceOptions): Promise<EngineContext> {
    const { adapterContexts: count, adapterSequences: sequences, contextSize, threads, onDecode } = options;
    this.adapterPool ??= createContexts(this.model, count, {
      sequences,
      contextSize,
      threads,
      onDecode,
      promptCacheTokens: options.promptCacheTokens,
      onPromptCache: options.onPromptCache,
      adapters: true,
    });
    // A failed creation is forgotten, so that the next adapter tries again.
    this.adapterPool.catch(() => {
      this.adapterPool = undefined;
    });
    return this.adapterPool;
  }

  /** Takes no more requests; resolves once those in flight have ended and everything is freed. */
  retire(): Promise<void> {
    this.retired ??= new Promise<void>((resolve) => {
      this.retiring = resolve;
      if (this.inFlight === 0) resolve();
    }).then(async () => {
      await this.adapters.dispose();
      await (await this.adapterPool?.catch(() => undefined))?.dispose();
      await this.base.dispose();
      await this.model.dispose();
    });
    return this.retired;
  }
}

/** The base model's shared context(s), with its express context beside them when it has one. */
async function createBaseContext(model: EngineModel, options: ModelInstanceOptions): Promise<EngineContext> {
  const { contextsPerModel: count, sequencesPerContext: sequences, expressSequences, contextSize, threads } = options;
  const { onDecode, promptCacheTokens, onPromptCache } = options;
  const cache = { promptCacheTokens, onPromptCache };
  const shared = await createContexts(model, count, { sequences, contextSize, threads, onDecode, ...cache });
  if (expressSequences === 0) return shared;
  try {
    const express = await model.createContext({
      sequences: expressSequences,
      contextSize,
      threads,
      ...cache,
      onDecode: onDecode && ((sample) => onDecode({ ...sample, express: true })),
    });
    return new ExpressContext(shared, express);
  } catch (error) {
    // The failure itself is what the caller sees.
    await shared.dispose().catch(() => {});
    throw error;
  }
}

/** `count` contexts of a model behind one EngineContext (the least busy takes each request). */
async function createContexts(model: EngineModel, count: number, options: ContextOptions): Promise<EngineContext> {
  const contexts: EngineContext[] = [];
  try {
    for (let i = 0; i < count; i++) contexts.push(await model.createContext(options));
  } catch (error) {
    // Frees what was made before the failure; the failure itself is what the caller sees.
    for (const context of contexts) await context.dispose().catch(() => {});
    throw error;
  }
  return contexts.length === 1 ? contexts[0]! : new ContextPool(contexts);
}

/** One adapter on the shared adapter contexts: its requests generate with it; disposing it frees its weights. */
class AdapterOnContexts implements EngineContext {
  constructor(
    private readonly contexts: EngineContext,
    private readonly adapter: EngineAdapter,
  ) {}

  get contextSize(): number {
    return this.contexts.contextSize;
  }

  get sequences(): number {
    return this.contexts.sequences;
  }

  generate(request: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult> {
    return this.contexts.generate({ ...request, adapter: this.adapter }, signal, onText);
  }

  dispose(): Promise<void> {
    return this.adapter.dispose();
  }
}
