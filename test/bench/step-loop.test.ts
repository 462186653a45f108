/**
 * The bench's step loop (bench/src/step-loop.ts), the versus scenario's measure of what a loop
 * without node-llama-cpp's per-sequence JavaScript costs, must generate what node-llama-cpp's
 * own `evaluate` generates, or its figures would compare unlike work: the same greedy tokens for
 * every sequence, with prompts that take more than one batch, and again on reused sequences.
 */
import type { LlamaModel, Token } from "node-llama-cpp";
import { beforeAll, describe, expect, it } from "vitest";
import { StepLoop } from "../../bench/src/step-loop.js";
import { loadBatchSampler, samplingBatches } from "../../src/workers/engine/batch-sampler.js";
import { vocabularySizeOf } from "../../src/workers/engine/llama-model.js";
import { distinctPrompts, useTinyRandomModel } from "../helpers/tiny-random-model.js";

const TOKENS = 20;
const PROMPT_TOKENS = 12;

describe("the bench's step loop", () => {
  const loaded = useTinyRandomModel("step-loop");
  let model: LlamaModel;
  beforeAll(() => {
    model = loaded();
  });

  const prompts = (count: number): Token[][] => distinctPrompts(count, PROMPT_TOKENS);

  /** node-llama-cpp's own answer to one prompt, alone on a context. */
  const evaluated = async (prompt: Token[]): Promise<Token[]> => {
    const context = await model.createContext({ sequences: 1, contextSize: 256, threads: 1 });
    try {
      const tokens: Token[] = [];
      for await (const token of context.getSequence().evaluate(prompt, { temperature: 0 })) {
        tokens.push(token);
        if (tokens.length >= TOKENS) break;
      }
      return tokens;
    } finally {
      await context.dispose();
    }
  };

  it("gives each sequence the tokens node-llama-cpp's evaluate gives, prompts in two batches, then again", async () => {
    const sampler = loadBatchSampler().sampler;
    expect(sampler, "the batch sampler is built by npm ci").toBeDefined();
    // A batch holds 2 of the 4 prompts (12 tokens each): the prompts go in two decodes.
    const context = await model.createContext({ sequences: 4, contextSize: 256, threads: 1, batchSize: 30 });
    const loop = StepLoop.over(model, context, samplingBatches(sampler!, vocabularySizeOf(model), 1));
    try {
      const asked = prompts(4);
      const expected = await Promise.all(asked.map(evaluated));
      expect(new Set(expected.map((t) => t.join(","))).size).toBe(4);
      const first = await loop.generate(asked, TOKENS);
      expect(first.tokens).toEqual(expected);
      expect(first.chars).toBeGreaterThan(0);
      // Reused sequences start clean; fewer prompts than sequences use the first ones.
      const again = await loop.generate(asked.slice(0, 3).reverse(), TOKENS);
      expect(again.tokens).toEqual(expected.slice(0, 3).reverse());
    } finally {
      await loop.dispose();
      await context.dispose();
    }
  });

  it("refuses more prompts than sequences, and a prompt over the batch size", async () => {
    const sampler = loadBatchSampler().sampler!;
    const context = await model.createContext({ sequences: 2, contextSize: 256, threads: 1, batchSize: 8 });
    const loop = StepLoop.over(model, context, samplingBatches(sampler, vocabularySizeOf(model), 1));
    try {
      await expect(loop.generate(prompts(3), TOKENS)).rejects.toThrow("3 prompts for 2 sequences");
      await expect(loop.generate(prompts(1), TOKENS)).rejects.toThrow("a prompt of 12 tokens is over the batch size");
    } finally {
      await loop.dispose();
      await context.dispose();
    }
  });
});
