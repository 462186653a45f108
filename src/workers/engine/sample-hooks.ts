import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { sequenceIdOf } from "./sequence-ids.js";

/** node-llama-cpp's native sampler (llama.cpp's sampler chain for one sequence); opaque but for these. */
export interface NativeSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}

/** The native context's sampling call: samples the token at a batch's logit index with `sampler`. */
export type NativeSample = (batchLogitIndex: number, sampler: NativeSampler, ...rest: unknown[]) => Promise<unknown>;

/**
 * Runs in place of one sequence's sampling: it may sample with other samplers first (the logits
 * stay until the context's next decode, which waits for every sampling of the batch), then
 * must sample with `sampler` and return what `sample` returned.
 */
export type SampleHook = (
  sample: NativeSample,
  batchLogitIndex: number,
  sampler: NativeSampler,
  rest: unknown[],
) => Promise<unknown>;

interface NativeContext {
  initBatch(size: number): unknown;
  addToBatch(sequenceId: number, first: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  sampleToken: NativeSample;
}

/**
 * Per-sequence hooks around node-llama-cpp's sampling, for what its sampler options cannot
 * say (typical sampling, typical-sampling.ts). node-llama-cpp samples each sequence of a batch
 * through its internal native context (`_ctx.sampleToken`) with a batch logit index; which
 * sequence that index belongs to is what `addToBatch` returned for the sequence when the
 * batch was built. This shadows those three methods on the instance, as sampling-guard.ts
 * and decode-observer.ts do; the engine tests that sample with a hook fail on a version
 * where they change.
 */
export class SampleHooks {
  private readonly hooks = new Map<number, SampleHook>();
  /** The batch's logit indexes → the sequence each belongs to. */
  private readonly owners = new Map<number, number>();

  private constructor() {}

  /** Call after guardSampling, so that a hook's samplings are serialized each. */
  static attach(context: LlamaContext): SampleHooks {
    const native = (context as unknown as { _ctx?: Partial<NativeContext> })._ctx;
    if (
      typeof native?.initBatch !== "function" ||
      typeof native.addToBatch !== "function" ||
      typeof native.sampleToken !== "function"
    ) {
      throw new Error("node-llama-cpp's context has no native batch and sample methods: SampleHooks needs updating");
    }
    const hooks = new SampleHooks();
    const initBatch = native.initBatch.bind(native);
    const addToBatch = native.addToBatch.bind(native);
    const sample = native.sampleToken.bind(native) as NativeSample;
    const shadow = (name: keyof NativeContext, value: (...args: never[]) => unknown) =>
      Object.defineProperty(native, name, { configurable: true, value });
    shadow("initBatch", (size: number) => {
      hooks.owners.clear();
      return initBatch(size);
    });
    shadow("addToBatch", (sequenceId: number, first: number, tokens: Uint32Array, logitIndexes: Uint32Array) => {
      const indexes = addToBatch(sequenceId, first, tokens, logitIndexes);
      for (const index of indexes) hooks.owners.set(index, sequenceId);
      return indexes;
    });
    shadow("sampleToken", (batchLogitIndex: number, sampler: NativeSampler, ...rest: unknown[]) => {
      const owner = hooks.owners.get(batchLogitIndex);
      const hook = owner === undefined ? undefined : hooks.hooks.get(owner);
      return hook ? hook(sample, batchLogitIndex, sampler, rest) : sample(batchLogitIndex, sampler, ...rest);
    });
    return hooks;
  }

  /** `hook` samples for `sequence` until `remove`. */
  set(sequence: LlamaContextSequence, hook: SampleHook): void {
    this.hooks.set(sequenceIdOf(sequence), hook);
  }

  remove(sequence: LlamaContextSequence): void {
    this.hooks.delete(sequenceIdOf(sequence));
  }
}
