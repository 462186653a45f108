/**
 * The worker's generation loop on node-llama-cpp's batches (sequence-driver.ts) must generate
 * exactly what node-llama-cpp's own `evaluateWithMetadata` generates, with the settings applied
 * once where they stay and each token where they change, and leave the sequence's record as
 * node-llama-cpp's evaluation leaves it (the prompt cache and the cell eraser read it).
 */
import type { LlamaModel, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import { beforeAll, describe, expect, it } from "vitest";
import { loadBatchSampler, samplingBatches } from "../../../src/workers/engine/batch-sampler.js";
import { vocabularySizeOf } from "../../../src/workers/engine/llama-model.js";
import { guardSampling } from "../../../src/workers/engine/sampling-guard.js";
import { type DrivenStep, driveSequence } from "../../../src/workers/engine/sequence-driver.js";
import { distinctPrompts, useTinyRandomModel } from "../../helpers/tiny-random-model.js";

const TOKENS = 16;
const PROMPT_TOKENS = 12;

describe("the sequence driver", () => {
  const loaded = useTinyRandomModel("sequence-driver");
  let model: LlamaModel;
  beforeAll(() => {
    model = loaded();
  });

  const prompts = (count: number): Token[][] => distinctPrompts(count, PROMPT_TOKENS);

  /** Options for one generation, given the tokens it has generated so far (for penalties over them). */
  type Options = (generated: Token[]) => SequenceEvaluateOptions;

  /** node-llama-cpp's own steps for one prompt, alone on a context. */
  const evaluated = async (prompt: Token[], options: Options, probabilities = false) => {
    const context = await model.createContext({ sequences: 1, contextSize: 256, threads: 1 });
    try {
      const steps: DrivenStep[] = [];
      const generated: Token[] = [];
      const evaluation = context.getSequence().evaluateWithMetadata(prompt, { probabilities }, options(generated));
      for await (const step of evaluation) {
        generated.push(step.token);
        const given = (step as { probabilities?: Map<Token, number> }).probabilities;
        steps.push(probabilities ? { token: step.token, probabilities: given } : { token: step.token });
        if (steps.length >= TOKENS) break;
      }
      return steps;
    } finally {
      await context.dispose();
    }
  };

  /** Drives one sequence of `context` per prompt, all at once; each stops after TOKENS steps. */
  const driven = (
    context: Awaited<ReturnType<LlamaModel["createContext"]>>,
    asked: Token[][],
    options: (i: number) => Options,
    probabilities = false,
  ) =>
    Promise.all(
      asked.map(async (prompt, i) => {
        const sequence = context.getSequence();
        const steps: DrivenStep[] = [];
        const generated: Token[] = [];
        await driveSequence(sequence, prompt, options(i)(generated), probabilities, (step) => {
          generated.push(step.token);
          steps.push(step);
          return steps.length < TOKENS;
        });
        return { sequence, steps };
      }),
    );

  it("gives each sequence of a batch node-llama-cpp's tokens, and its record of the cells", async () => {
    const sampler = loadBatchSampler().sampler;
    expect(sampler, "the batch sampler is built by npm ci").toBeDefined();
    for (const batches of [samplingBatches(sampler!, vocabularySizeOf(model), 1), undefined]) {
      // A batch holds 2 of the 4 prompts (12 tokens each): the prompts go in two decodes.
      const context = await model.createContext({ sequences: 4, contextSize: 256, threads: 1, batchSize: 30 });
      guardSampling(context, batches);
      try {
        const asked = prompts(4);
        const greedy = () => ({ temperature: 0 });
        const expected = await Promise.all(asked.map((p) => evaluated(p, greedy)));
        expect(new Set(expected.map((s) => s.map((t) => t.token).join(","))).size).toBe(4);
        const runs = await driven(context, asked, () => greedy);
        runs.forEach(({ sequence, steps }, i) => {
          expect(steps).toEqual(expected[i]);
          // The last token was sampled, not decoded: the cells hold the prompt and the others.
          const decoded = [...asked[i]!, ...steps.slice(0, -1).map((s) => s.token)];
          expect(sequence.contextTokens).toEqual(decoded);
          expect(sequence.nextTokenIndex).toBe(decoded.length);
        });
      } finally {
        await context.dispose();
      }
    }
  });

  it("samples as node-llama-cpp does with a seed, and with penalties over the generated tokens", async () => {
    const sampler = loadBatchSampler().sampler!;
    const context = await model.createContext({ sequences: 4, contextSize: 256, threads: 1 });
    guardSampling(context, samplingBatches(sampler, vocabularySizeOf(model), 1));
    try {
      const asked = prompts(4);
      // Seeded draws (settings applied once), then a penalty over the tokens generated so far.
      const options =
        (i: number): Options =>
        (generated) => {
          const seeded = { temperature: 1.5, topK: 0, topP: 1, seed: 1000 + i };
          if (i < 2) return seeded;
          const penalty = { penalty: 1.8, presencePenalty: 0.5, frequencyPenalty: 0.5 };
          return { ...seeded, repeatPenalty: { punishTokens: () => generated, ...penalty } };
        };
      const expected = await Promise.all(asked.map((p, i) => evaluated(p, options(i))));
      // The penalised ones draw differently from the same seed unpenalised: the penalty is in force.
      const unpenalised = await evaluated(asked[2]!, (generated) => {
        const { repeatPenalty: _, ...seeded } = options(2)(generated);
        return seeded;
      });
      expect(unpenalised).not.toEqual(expected[2]);
      const runs = await driven(context, asked, options);
      expect(runs.map((r) => r.steps)).toEqual(expected);
    } finally {
      await context.dispose();
    }
  });

  it("gives node-llama-cpp's probabilities with each token, and stops when told", async () => {
    const context = await model.createContext({ sequences: 3, contextSize: 256, threads: 1 });
    guardSampling(context);
    try {
      const asked = prompts(2);
      const greedy = () => ({ temperature: 0 });
      const expected = await Promise.all(asked.map((p) => evaluated(p, greedy, true)));
      const runs = await driven(context, asked, () => greedy, true);
      runs.forEach(({ steps }, i) => {
        expect(steps).toEqual(expected[i]);
        expect(steps[0]!.probabilities!.size).toBeGreaterThan(1);
      });
      const sequence = context.getSequence();
      let steps = 0;
      await driveSequence(sequence, asked[0]!, { temperature: 0 }, false, () => ++steps < 3);
      expect(steps).toBe(3);
      expect(sequence.nextTokenIndex).toBe(PROMPT_TOKENS + 2);
    } finally {
      await context.dispose();
    }
  });
});
