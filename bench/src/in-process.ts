import {
  getLlama,
  LlamaLogLevel,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { observeDecodes } from "../../src/workers/engine/decode-observer.js";
import { lastCudaBuild } from "../../src/workers/engine/local-cuda-build.js";
import { loadConfig } from "../../src/config.js";
import { loadBatchSampler, type SamplingBatches, samplingBatches } from "../../src/workers/engine/batch-sampler.js";
import { vocabularySizeOf } from "../../src/workers/engine/llama-model.js";
import { guardSampling } from "../../src/workers/engine/sampling-guard.js";
import { driveSequence } from "../../src/workers/engine/sequence-driver.js";
import { contextToBeIds, sequenceIdOf } from "../../src/workers/engine/sequence-ids.js";
import { StepGang } from "../../src/workers/engine/step-gang.js";
import { PassPlanner } from "../../src/workers/engine/pass-planner.js";
import { usableCores } from "../../src/process/usable-cores.js";
import { countDecode, noSteps, type StepTimes } from "./step-times.js";

/**
 * The baseline: the same generation done directly with node-llama-cpp in the bench
 * process, with none of Hearth's code in the way (this is why it imports node-llama-cpp
 * itself rather than going through the worker's engine). Same model file, same threads,
 * context size and sequences as the worker, greedy sampling, text decoded per token.
 */

export interface InProcessSettings {
  threads: number;
  contextSize: number;
  sequences: number;
}

export interface GenerationTiming {
  /** Call to the first generated token. */
  ttftMs: number;
  /** Call to the last generated token. */
  totalMs: number;
  tokens: number;
  /** Characters of text the tokens decoded to. */
  chars: number;
}

export interface LlamaBuildInfo {
  llamaCppRepo: string;
  llamaCppRelease: string;
  buildType: string;
  gpu: string;
  systemInfo: string;
}

let shared: Promise<Llama> | undefined;
/** The backend workers load: node-llama-cpp's best, with the local CUDA build where there is one (build:cuda). */
const llamaInstance = () =>
  (shared ??= lastCudaBuild().then((build) =>
    getLlama({
      gpu: "auto",
      build: "never",
      progressLogs: false,
      logLevel: LlamaLogLevel.error,
      ...(build ? { cmakeOptions: build.cmakeOptions } : {}),
    }),
  ));

/** What llama.cpp build node-llama-cpp uses here (the release it was built from, CPU features). */
export async function llamaBuildInfo(): Promise<LlamaBuildInfo> {
  const llama = await llamaInstance();
  return {
    llamaCppRepo: llama.llamaCppRelease.repo,
    llamaCppRelease: llama.llamaCppRelease.release,
    buildType: llama.buildType,
    gpu: String(llama.gpu),
    systemInfo: llama.systemInfo.trim(),
  };
}

/**
 * `modelPath` on the workers' backend, in a context with their threads, sequences and context
 * size, whose batches go in sequence ID order as the workers' do (StepGang with no sequences in
 * its gang orders a batch and waits for nobody): in the order decodes were queued, llama.cpp
 * would make a pass over the weights for each break in the IDs (sequence-ids.ts). A step goes in
 * one pass or a pass each as `planner` finds faster, as in the workers: feed it the context's
 * decodes (pass-planner.ts).
 */
export async function loadAsWorkers(
  modelPath: string,
  settings: InProcessSettings,
): Promise<{ model: LlamaModel; context: LlamaContext; planner: PassPlanner }> {
  const llama = await llamaInstance();
  const model = await llama.loadModel({ modelPath, gpuLayers: "auto" });
  const { ids, attach } = contextToBeIds();
  const planner = new PassPlanner();
  const context = await model.createContext({
    sequences: settings.sequences,
    contextSize: Math.min(settings.contextSize, model.trainContextSize),
    threads: settings.threads,
    batching: { itemPrioritizationStrategy: new StepGang().strategy({ ids, planner }) },
  });
  attach(context);
  return { model, context, planner };
}

/** The batch sampler as workers set it up for `model`, or undefined where it is not built. */
export function workersSamplingBatches(model: LlamaModel): SamplingBatches | undefined {
  const sampler = loadBatchSampler().sampler;
  // The cores read once, as the worker's engine does: not a cgroup file read per step.
  return sampler ? samplingBatches(sampler, vocabularySizeOf(model), usableCores()) : undefined;
}

/** `text` tokenized as a prompt: BOS first where the model wants one. */
export function promptTokens(model: LlamaModel, text: string): Token[] {
  const tokens = model.tokenize(text, false);
  const bos = model.tokens.bos;
  return model.tokens.shouldPrependBosToken && bos !== null && tokens[0] !== bos ? [bos, ...tokens] : tokens;
}

/** The worker's own generation loop over node-llama-cpp's batches (sequence-driver.ts), or node-llama-cpp's `evaluate`. */
export type InProcessGeneration = "driver" | "evaluate";

export class InProcessModel {
  private counted: StepTimes = noSteps();
  /** The context's sequences no generation holds, lowest ID first. */
  private readonly free: LlamaContextSequence[] = [];
  /** Generations waiting for a sequence to come free. */
  private waiting: (() => void)[] = [];

  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    planner: PassPlanner,
    /** How its samplings go: as the worker's, in one native call per step where the batch sampler is built. */
    readonly sampling: "batched" | "in turn",
    batches: SamplingBatches | undefined,
    /** How it generates: as the worker does (sequence-driver.ts), or through node-llama-cpp's `evaluate`. */
    readonly generation: InProcessGeneration,
  ) {
    guardSampling(context, batches);
    observeDecodes(context, (decode) => {
      countDecode(this.counted, decode);
      planner.record(decode);
    });
    while (context.sequencesLeft > 0) this.free.push(context.getSequence());
  }

  /** The generation steps counted since the last call, and starts counting afresh. */
  takeSteps(): StepTimes {
    const counted = this.counted;
    this.counted = noSteps();
    return counted;
  }

  /**
   * With `batchSampling` (by default the workers' HEARTH_NATIVE_SAMPLER), a step's samplings go in
   * one native call where the batch sampler is built, as in the worker; false: one call each.
   */
  static async load(
    modelPath: string,
    settings: InProcessSettings,
    batchSampling = loadConfig(process.env).worker.nativeSampler,
    generation: InProcessGeneration = "driver",
  ): Promise<InProcessModel> {
    const { model, context, planner } = await loadAsWorkers(modelPath, settings);
    const batches = batchSampling ? workersSamplingBatches(model) : undefined;
    return new InProcessModel(model, context, planner, batches ? "batched" : "in turn", batches, generation);
  }

  /** A generation of each prompt, all at once, each in a sequence of its own, decoded together. */
  async generateTogether(prompts: readonly string[], maxTokens: number): Promise<GenerationTiming[]> {
    return Promise.all(prompts.map((prompt) => this.generate(prompt, maxTokens)));
  }

  /**
   * Generates `maxTokens` tokens greedily after `prompt` (BOS first where the model wants one), on
   * the free sequence of the lowest ID: generations at once hold consecutive IDs, and their steps
   * take one pass each (sequence-ids.ts), as the worker's prompt cache arranges.
   */
  async generate(prompt: string, maxTokens: number): Promise<GenerationTiming> {
    const started = performance.now();
    const tokens = promptTokens(this.model, prompt);
    while (this.free.length === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const sequence = this.free.shift()!;
    try {
      let ttftMs = Number.NaN;
      const generated: Token[] = [];
      let chars = 0;
      const take = (token: Token) => {
        if (generated.length === 0) ttftMs = performance.now() - started;
        chars += this.model.detokenize([token], false, generated.slice(-4)).length;
        generated.push(token);
        return generated.length < maxTokens;
      };
      if (this.generation === "driver") {
        await driveSequence(sequence, tokens, { temperature: 0 }, false, ({ token }) => take(token));
      } else {
        for await (const token of sequence.evaluate(tokens, { temperature: 0 })) if (!take(token)) break;
      }
      return { ttftMs, totalMs: performance.now() - started, tokens: generated.length, chars };
    } finally {
      await sequence.clearHistory();
      this.free.push(sequence);
      this.free.sort((a, b) => sequenceIdOf(a) - sequenceIdOf(b));
      for (const wake of this.waiting.splice(0)) wake();
    }
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
