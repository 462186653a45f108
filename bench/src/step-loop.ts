import type { LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { sequenceIdOf } from "../../src/workers/engine/sequence-ids.js";
import type { SamplingBatches } from "../../src/workers/engine/batch-sampler.js";
import { type InProcessSettings, loadAsWorkers, promptTokens, workersSamplingBatches } from "./in-process.js";

/** The native context's batch calls that node-llama-cpp's own loop makes (AddonContext.cpp). */
interface NativeBatches {
  initBatch(size: number): void;
  addToBatch(sequenceId: number, firstPosition: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean;
}

interface NativeSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}

type SamplerClass = new (model: unknown) => NativeSampler;

/**
 * A measure of what node-llama-cpp's per-sequence generation costs (bench only, for the
 * versus scenario): the same greedy generation as InProcessModel's, with none of the binding's
 * JavaScript between two decodes. One loop drives the native context for all sequences: a
 * step is one batch of every sequence's last token, one decode and one call of the batch
 * sampler, then each token detokenized as the worker does. Prompts go in as few batches as the
 * context's batch size allows, each batch's first tokens sampled right after its decode (its
 * logits last until the next). A sequence ends at its model's end of generation or at
 * `maxTokens`. It gives the tokens node-llama-cpp's `evaluate` gives (test/bench/step-loop.test.ts).
 */
export class StepLoop {
  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly native: NativeBatches,
    private readonly ids: number[],
    private readonly samplers: NativeSampler[],
    private readonly batches: SamplingBatches,
  ) {}

  /**
   * `modelPath` loaded as InProcessModel loads it (the workers' backend, their threads, sequences
   * and context), or undefined where the batch sampler is not built.
   */
  static async load(modelPath: string, settings: InProcessSettings): Promise<StepLoop | undefined> {
    const { model, context } = await loadAsWorkers(modelPath, settings);
    const batches = workersSamplingBatches(model);
    if (!batches) {
      await context.dispose();
      await model.dispose();
      return undefined;
    }
    const loop = StepLoop.over(model, context, batches);
    loop.owned = true;
    return loop;
  }

  /** The model and context are this loop's own (load), disposed with it. */
  private owned = false;

  /**
   * `count` greedy generations of `maxTokens` after `prompt` (tokenized as InProcessModel's),
   * decoded together: resolves to the tokens generated.
   */
  async generateTogether(prompt: string, maxTokens: number, count: number): Promise<number> {
    const asked = promptTokens(this.model, prompt);
    const { tokens } = await this.generate(
      Array.from({ length: count }, () => asked),
      maxTokens,
    );
    return tokens.reduce((sum, t) => sum + t.length, 0);
  }

  /** A loop over all of `context`'s sequences (taken from it for good), sampling through `batches`. */
  static over(model: LlamaModel, context: LlamaContext, batches: SamplingBatches): StepLoop {
    const native = (context as unknown as { _ctx?: Partial<NativeBatches> })._ctx;
    const Sampler = (model as unknown as { _llama?: { _bindings?: { AddonSampler?: SamplerClass } } })._llama?._bindings
      ?.AddonSampler;
    const handle = (model as unknown as { _model?: unknown })._model;
    if (
      typeof native?.initBatch !== "function" ||
      typeof native.addToBatch !== "function" ||
      typeof native.decodeBatch !== "function" ||
      typeof native.removeTokenCellsFromSequence !== "function" ||
      typeof Sampler !== "function"
    ) {
      throw new Error("node-llama-cpp's native context or sampler changed: the bench's step loop needs updating");
    }
    const ids = Array.from({ length: context.totalSequences }, () => sequenceIdOf(context.getSequence()));
    const samplers = ids.map(() => {
      const sampler = new Sampler(handle);
      sampler.applyConfig({ temperature: 0 });
      return sampler;
    });
    return new StepLoop(model, context, native as NativeBatches, ids, samplers, batches);
  }

  /**
   * Generates up to `maxTokens` greedy tokens after each prompt, one sequence each, decoded
   * together: the tokens of each, and the characters of text they decoded to.
   */
  async generate(prompts: readonly Token[][], maxTokens: number): Promise<{ tokens: Token[][]; chars: number }> {
    if (prompts.length > this.ids.length) throw new Error(`${prompts.length} prompts for ${this.ids.length} sequences`);
    const native = this.native;
    const batchSize = this.context.batchSize;
    const ids = this.ids.slice(0, prompts.length);
    for (const id of ids) native.removeTokenCellsFromSequence(id, 0, -1);
    const generated: Token[][] = prompts.map(() => []);
    const last: Token[] = [];
    let chars = 0;
    const take = (i: number, token: number) => {
      last[i] = token as Token;
      if (this.model.isEogToken(token as Token)) return;
      chars += this.model.detokenize([token as Token], false, generated[i]!.slice(-4)).length;
      generated[i]!.push(token as Token);
    };
    for (let start = 0; start < prompts.length; ) {
      let end = start;
      let size = 0;
      while (end < prompts.length && size + prompts[end]!.length <= batchSize) size += prompts[end++]!.length;
      if (end === start) throw new Error(`a prompt of ${prompts[start]!.length} tokens is over the batch size`);
      native.initBatch(size);
      const indexes = new Int32Array(end - start);
      for (let i = start; i < end; i++) {
        const prompt = prompts[i]!;
        indexes[i - start] = native.addToBatch(
          ids[i]!,
          0,
          Uint32Array.from(prompt),
          Uint32Array.of(prompt.length - 1),
        )[0]!;
      }
      await native.decodeBatch();
      const sampled = await this.sample(indexes, this.samplers.slice(start, end));
      for (let i = start; i < end; i++) take(i, sampled[i - start]!);
      start = end;
    }
    for (;;) {
      const running = prompts.flatMap((_, i) =>
        generated[i]!.length < maxTokens && generated[i]!.at(-1) === last[i] ? [i] : [],
      );
      if (running.length === 0) break;
      native.initBatch(running.length);
      const indexes = new Int32Array(running.length);
      running.forEach((i, k) => {
        const position = prompts[i]!.length + generated[i]!.length - 1;
        indexes[k] = native.addToBatch(ids[i]!, position, Uint32Array.of(last[i]!), Uint32Array.of(0))[0]!;
      });
      await native.decodeBatch();
      const sampled = await this.sample(
        indexes,
        running.map((i) => this.samplers[i]!),
      );
      for (const [k, i] of running.entries()) take(i, sampled[k]!);
    }
    return { tokens: generated, chars };
  }

  private async sample(indexes: Int32Array, samplers: NativeSampler[]): Promise<Int32Array> {
    const { tokens, errors } = await this.batches.sampler.sampleTokens(
      this.native,
      indexes,
      samplers,
      this.batches.threads(indexes.length),
    );
    const failed = tokens.findIndex((t) => t < 0);
    if (failed !== -1) throw new Error(`the step loop's sampling failed: ${errors[failed] ?? "no token"}`);
    return tokens;
  }

  async dispose(): Promise<void> {
    for (const sampler of this.samplers) sampler.dispose();
    if (!this.owned) return;
    await this.context.dispose();
    await this.model.dispose();
  }
}
