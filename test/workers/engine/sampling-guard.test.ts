/**
 * A native sampling that fails ends its own sequence's generation with an error, never the
 * process, and the other sequences of the context go on as if nothing happened.
 *
 * The failure is real: llama.cpp's grammar sampler lets a token through its candidate filter and
 * then refuses it once sampled ("Unexpected empty grammar stack after accepting piece"), with a
 * byte-level vocabulary where some pieces read as U+0000 (C0 80). node-llama-cpp is driven here
 * without Hearth's bans (grammar-token-bans.ts), so the failure happens; before guardSampling
 * contained it, the rejection went unhandled inside node-llama-cpp's batch loop and the process died.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  getLlama,
  type Llama,
  LlamaGrammarEvaluationState,
  LlamaLogLevel,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError, errorCodes } from "../../../src/errors.js";
import { buildBenchModels } from "../../../src/models/factory/bench-models.js";
import { samplingError } from "../../../src/workers/engine/sampling-error.js";
import { loadBatchSampler, type SamplingBatches } from "../../../src/workers/engine/batch-sampler.js";
import { guardSampling, takeSamplingFailure } from "../../../src/workers/engine/sampling-guard.js";
import { driveSequence } from "../../../src/workers/engine/sequence-driver.js";
import { wideVocabShape } from "../../helpers/bench-shapes.js";
import { greedyTokens } from "../../helpers/greedy-tokens.js";

/** The bench's structured scenario's kind of schema (a list of records), smaller. */
const SCHEMA = {
  type: "array",
  minItems: 20,
  maxItems: 20,
  items: {
    type: "object",
    properties: { name: { type: "string", maxLength: 24 }, score: { type: "number" }, active: { type: "boolean" } },
    required: ["name", "score", "active"],
  },
} as const;
const PROMPTS = ["Once upon a time", "The quick brown fox", "JSON: "];
const FREE_TOKENS = 48;
const SEEDS = 8;

/** The guard with no batch sampler (one native call a sampling), and with it (a step's samplings in one call). */
const MODES = [
  { mode: "one call each", batches: () => undefined },
  { mode: "batched", batches: batchesOrFail },
] as const;

function batchesOrFail(): SamplingBatches {
  const loaded = loadBatchSampler();
  if (!loaded.sampler) throw new Error(`the batch sampler did not load: ${loaded.reason}`);
  return { sampler: loaded.sampler, threads: () => 2 };
}

describe.each(MODES)("a failed native sampling ($mode)", ({ batches }) => {
  let dir: string;
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext;
  let grammar: LlamaGrammar;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-sampling-failure-"));
    const built = await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 });
    llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    model = await llama.loadModel({ modelPath: built.baseModel });
    // A sequence per free prompt and per seed tried: a disposed one comes back only once the batch loop rests.
    context = await model.createContext({ contextSize: 4096, sequences: PROMPTS.length + SEEDS, threads: 1 });
    guardSampling(context, batches());
    grammar = await llama.createGrammarForJsonSchema(SCHEMA as never);
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await llama?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** Greedy text of a prompt on a sequence of its own. */
  const free = (prompt: string) => greedyTokens(model, context, prompt, FREE_TOKENS);

  /** Hot sampling under the schema's grammar until it ends, fails, or writes 600 tokens. */
  async function constrained(seed: number): Promise<{ tokens: number; error?: unknown }> {
    const sequence = context.getSequence();
    const grammarEvaluationState = new LlamaGrammarEvaluationState({ model, grammar });
    let tokens = 0;
    try {
      // As the engine generates: through its driver (sequence-driver.ts).
      const options = { temperature: 1, seed, grammarEvaluationState };
      await driveSequence(sequence, model.tokenize(PROMPTS[0]!), options, false, () => ++tokens < 600);
      return { tokens };
    } catch (error) {
      return { tokens, error };
    } finally {
      await sequence.dispose();
    }
  }

  it("ends its own generation with an error, and the others of the context generate as alone", async () => {
    const alone: number[][] = [];
    for (const prompt of PROMPTS) alone.push(await free(prompt));

    // The constrained sequence tries seeds in turn while the free ones generate beside it.
    const failing = (async () => {
      for (let seed = 0; seed < SEEDS; seed++) {
        const run = await constrained(seed);
        if (run.error !== undefined) return { seed, ...run, native: takeSamplingFailure(context) };
      }
      return undefined;
    })();
    const [failure, ...together] = await Promise.all([failing, ...PROMPTS.map((prompt) => free(prompt))]);

    expect(failure, "no seed hit llama.cpp's grammar failure").toBeDefined();
    expect(String(failure!.error)).toContain("Failed to sample next token");
    expect(String(failure!.native)).toContain("Unexpected empty grammar stack after accepting piece");
    expect(together).toEqual(alone);

    // The context still serves: a fresh generation gives the same text again.
    expect(await free(PROMPTS[1]!)).toEqual(alone[1]);

    // What the request's client gets: a model_error (500, type model_error), not a crash nor an internal error.
    const error = samplingError(failure!.error, failure!.native, true);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "model_error", param: null });
    expect((error as AppError).message).toContain("could not accept");
    expect((error as AppError).detail).toContain("Unexpected empty grammar stack");
    expect(errorCodes.model_error).toEqual({ status: 500, type: "model_error" });
    // Without a grammar the same failure would be Hearth's own (internal); other errors pass through.
    expect(samplingError(failure!.error, failure!.native, false)).toMatchObject({ code: "internal" });
    const other = new Error("something else");
    expect(samplingError(other, undefined, true)).toBe(other);
  }, 120_000);
});

/**
 * The race the guard exists for: llama.cpp reorders a context's outputs in place on their first
 * read after a decode, and node-llama-cpp samples a step's sequences at once on the thread pool.
 * Sequences queue their next tokens in the order their samplings finish, so a batch's outputs are
 * often out of order and get reordered. Without the guard, this test's concurrent generations
 * differed from the same prompts alone in 24–38 of 72 (probe, 2 cores); with it, in none.
 */
describe.each(MODES)("the samplings of one step, run together ($mode)", ({ batches }) => {
  const SEQUENCES = 24;
  const TOKENS = 24;
  let dir: string;
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-sampling-race-"));
    // A wide vocabulary: each reorder moves 49 152 logits a row, a wide window for the race.
    const built = await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 });
    llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    model = await llama.loadModel({ modelPath: built.baseModel });
    context = await model.createContext({ contextSize: 64 * SEQUENCES, sequences: SEQUENCES, threads: 1 });
    guardSampling(context, batches());
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await llama?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const greedy = (prompt: string) => greedyTokens(model, context, prompt, TOKENS);

  it("gives each sequence the tokens it has alone", async () => {
    const prompts = Array.from(
      { length: SEQUENCES },
      (_, i) => `Prompt ${i}: ${"xyz ".repeat(i % 5)}the ${"abcdefghijklmnopqrstuvwxyz"[i]}`,
    );
    const alone: number[][] = [];
    for (const prompt of prompts) alone.push(await greedy(prompt));
    for (let round = 0; round < 3; round++) {
      expect(await Promise.all(prompts.map(greedy))).toEqual(alone);
    }
  }, 120_000);
});
