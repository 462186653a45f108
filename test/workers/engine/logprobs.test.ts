import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../../src/domain/generation.js";
import type { LogprobToken, TokenLogprob } from "../../../src/domain/logprobs.js";
import { END_OF_TEXT } from "../../../src/models/factory/bigram.js";
import type { EchoedPrompt, EngineContext, EngineModel, GenerateRequest } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import {
  CPU_TOLERANCE,
  expectOracleMatch,
  GPU_TOLERANCE,
  logprobsOf,
  oracleLogits,
  oracleLogprobs,
  tokenId,
} from "../../helpers/logprob-oracle.js";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir } from "../../helpers/test-models.js";

/** hearth-tiny's token of a logprob token: byte b is token b; <|endoftext|> is 256. */
function idOf(piece: LogprobToken): number {
  if (piece.token === "<|endoftext|>") return END_OF_TEXT;
  expect(piece.bytes).toHaveLength(1);
  return piece.bytes![0]!;
}

/** A token's logprob and its alternatives equal the oracle's at its position (to the backend's precision). */
function expectMatchesOracle(entry: TokenLogprob, expected: number[], top: number) {
  expect(entry.logprob).not.toBeNull();
  entry.top.forEach((alternative) => expect(tokenId(alternative.token)).toBe(idOf(alternative)));
  expectOracleMatch(entry, entry.top, expected, top, tolerance);
}

/** The engine's backend's precision: this file also runs on GPU machines (docs/gpu.md). */
let tolerance = CPU_TOLERANCE;

describe("logprobs against the bigram oracle", () => {
  let engine: LlamaEngine;
  let tiny: EngineModel;
  let context: EngineContext;

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    tolerance = engine.backend === "cpu" ? CPU_TOLERANCE : GPU_TOLERANCE;
    tiny = await engine.loadModel({ id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf"), threads: 1 });
    context = await tiny.createContext({ sequences: 2, contextSize: 256, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await tiny?.dispose();
    await engine?.close();
  });

  const sampling = (extra: Partial<Sampling>): Sampling => ({ maxTokens: 24, temperature: 0, stop: [], ...extra });

  /** Generates after `prompt` (text, or token IDs); with `echo`, `echoed` is the prompt as read. */
  async function run(
    prompt: string | number[],
    { echo, ...request }: Omit<Partial<GenerateRequest>, "echo"> & { sampling: Sampling; echo?: boolean },
  ) {
    let text = "";
    const logprobs: TokenLogprob[] = [];
    let echoed: EchoedPrompt | undefined;
    const result = await context.generate(
      {
        promptTokens: typeof prompt === "string" ? tiny.tokenize(prompt) : prompt,
        ...request,
        ...(echo ? { echo: (p: EchoedPrompt) => (echoed = p) } : {}),
      },
      new AbortController().signal,
      (t, l) => {
        expect(echoed === undefined, "the echo comes before any text").toBe(!echo);
        text += t;
        if (l) logprobs.push(...l);
      },
    );
    return { text, logprobs, echoed, prompted: echoed?.logprobs, ...result };
  }

  /** The bytes before each generated token: the prompt's last, then the generated ones. */
  function previous(prompt: string, logprobs: TokenLogprob[]): number[] {
    const bytes = [...new TextEncoder().encode(prompt)];
    return logprobs.map((_, i) => (i === 0 ? bytes.at(-1)! : idOf(logprobs[i - 1]!)));
  }

  it("gives each greedy token its probability at temperature 1, and the most likely alternatives", async () => {
    const prompt = "Kindling ";
    const r = await run(prompt, { sampling: sampling({}), logprobs: 5 });
    expect(r.text).toBe(greedyText(prompt, 24));
    expect(r.logprobs).toHaveLength(24);
    const prev = previous(prompt, r.logprobs);
    r.logprobs.forEach((entry, i) => {
      expectMatchesOracle(entry, oracleLogprobs(prev[i]!, 1), 5);
      // Greedy: the token is the most likely one.
      expect(entry.logprob).toBeCloseTo(entry.top[0]!.logprob!, 6);
    });
    // The tokens spell the text, each at its offset.
    expect(r.logprobs.map((e) => e.token).join("")).toBe(r.text);
    expect(r.logprobs.map((e) => e.offset)).toEqual(r.logprobs.map((_, i) => i));
  });

  it("reports the distribution after temperature and before top_k and top_p, without changing the text", async () => {
    const prompt = "The hearth ";
    const s = sampling({ temperature: 0.7, topK: 3, topP: 0.9, seed: 42, maxTokens: 40 });
    const plain = await run(prompt, { sampling: s });
    const r = await run(prompt, { sampling: s, logprobs: 20 });
    expect(r.text).toBe(plain.text);
    expect(r.logprobs.map((e) => e.token).join("")).toBe(r.text);
    const prev = previous(prompt, r.logprobs);
    r.logprobs.forEach((entry, i) => {
      const expected = oracleLogprobs(prev[i]!, 0.7);
      expectMatchesOracle(entry, expected, 20);
      // Sampled among the 3 most likely tokens, but reported against the whole vocabulary.
      expect(entry.logprob).toBeGreaterThanOrEqual(entry.top[2]!.logprob! - 1e-4);
    });
  });

  it("reports the distribution after the penalties", async () => {
    const prompt = "Embers ";
    const r = await run(prompt, { sampling: sampling({ presencePenalty: 1.5, maxTokens: 30 }), logprobs: 3 });
    const prev = previous(prompt, r.logprobs);
    const seen = new Set<number>();
    r.logprobs.forEach((entry, i) => {
      // llama.cpp's presence penalty: minus 1.5 on the logit of every token generated before.
      const logits = oracleLogits(prev[i]!);
      for (const token of seen) logits[token] = Math.fround(logits[token]! - 1.5);
      expectMatchesOracle(entry, logprobsOf(logits, 1), 3);
      seen.add(idOf(entry));
    });
    expect(r.text).not.toBe(greedyText(prompt, 30));
  });

  it("leaves out the tokens of a stop string", async () => {
    const prompt = "Embers ";
    const full = greedyText(prompt, 60);
    const stop = full.slice(20, 24);
    const r = await run(prompt, { sampling: sampling({ maxTokens: 60, stop: [stop] }), logprobs: 0 });
    expect(r.text).toBe(full.slice(0, full.indexOf(stop)));
    expect(r.logprobs.map((e) => e.token).join("")).toBe(r.text);
    expect(r.logprobs.every((e) => e.top.length === 0)).toBe(true);
  });

  it("scores the prompt: the first token has none, the others their probability after the temperature", async () => {
    const prompt = "Fire and ashes";
    const r = await run(prompt, {
      sampling: sampling({ temperature: 0.5, maxTokens: 8 }),
      logprobs: 2,
      echo: true,
    });
    const bytes = [...new TextEncoder().encode(prompt)];
    expect(r.prompted!.map((e) => e.token).join("")).toBe(prompt);
    expect(r.prompted!.map((e) => e.offset)).toEqual(bytes.map((_, i) => i));
    expect(r.prompted![0]).toMatchObject({ token: "F", bytes: [70], logprob: null, top: [] });
    r.prompted!.slice(1).forEach((entry, i) => {
      expectMatchesOracle(entry, oracleLogprobs(bytes[i]!, 0.5), 2);
    });
    // Generation goes on from the whole prompt as usual.
    expect(r.logprobs).toHaveLength(8);
    const prev = previous(prompt, r.logprobs);
    r.logprobs.forEach((entry, i) => expectMatchesOracle(entry, oracleLogprobs(prev[i]!, 0.5), 2));
    expect(r.promptTokens).toBe(bytes.length);
    expect(r.echoed).toMatchObject({ text: prompt, truncated: false });
  });

  it("echoes token IDs as the model's text of them, exactly those tokens scored", async () => {
    // "Hé!" in bytes, the é cut across two byte tokens; then <|endoftext|>, which has no text.
    const ids = [0x48, 0xc3, 0xa9, 0x21, END_OF_TEXT, 0x6f];
    const plain = await run(ids, { sampling: sampling({ maxTokens: 3 }), echo: true });
    expect(plain.echoed).toEqual({ text: "Hé!o", truncated: false });
    expect(plain.text).toBe(greedyText("o", 3));
    const r = await run(ids, { sampling: sampling({ maxTokens: 3 }), logprobs: 1, echo: true });
    expect(r.echoed!.text).toBe("Hé!o");
    expect(r.prompted!.map(idOf)).toEqual(ids);
    expect(r.prompted!.map((e) => e.offset)).toEqual([0, 1, 1, 2, 3, 3]);
    expect(r.prompted![0]!.logprob).toBeNull();
    r.prompted!.slice(1).forEach((entry, i) => expectMatchesOracle(entry, oracleLogprobs(ids[i]!, 1), 1));
  });

  it("echoes what the model read of a truncated prompt: its kept end, the first kept token unscored", async () => {
    const prompt = `${"The hearth burns. ".repeat(20)}Ash`;
    const overflow = { maxTokens: 6, onContextOverflow: "truncate" as const };
    const r = await run(prompt, { sampling: sampling(overflow), logprobs: 0, echo: true });
    const kept = [...new TextEncoder().encode(prompt)].slice(-(256 - 6));
    expect(r.promptTokens).toBe(kept.length);
    expect(r.echoed!.truncated).toBe(true);
    expect(r.echoed!.text).toBe(prompt.slice(-kept.length));
    expect(r.prompted!.map(idOf)).toEqual(kept);
    expect(r.prompted![0]!.logprob).toBeNull();
    r.prompted!.slice(1).forEach((entry, i) => expectMatchesOracle(entry, oracleLogprobs(kept[i]!, 1), 0));
    expect(r.text).toBe(greedyText(prompt, 6));
    const plain = await run(prompt, { sampling: sampling(overflow), echo: true });
    expect(plain.echoed).toEqual({ text: prompt.slice(-kept.length), truncated: true });
  });

  it("gives a byte that is part of a character its raw byte and an escaped text", async () => {
    const prompt = "café!";
    const r = await run(prompt, { sampling: sampling({ maxTokens: 2 }), logprobs: 1, echo: true });
    const e = r.prompted!.slice(3, 5);
    expect(e.map((x) => ({ token: x.token, bytes: x.bytes, offset: x.offset }))).toEqual([
      { token: "\\xc3", bytes: [0xc3], offset: 3 },
      { token: "\\xa9", bytes: [0xa9], offset: 3 },
    ]);
    expect(r.prompted![5]).toMatchObject({ token: "!", offset: 4 });
    expectMatchesOracle(r.prompted![4]!, oracleLogprobs(0xc3, 1), 1);
  });

  // node-llama-cpp's own defaults are top_k 40 and top_p 0.95; Hearth's are off, as documented.
  it("samples from the whole distribution when top_k and top_p are not given", async () => {
    const ranks = async (extra: Partial<Sampling>) => {
      const out: number[] = [];
      for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const r = await run("Embers ", {
          sampling: sampling({ temperature: 2, seed, maxTokens: 48, ...extra }),
          logprobs: 0,
        });
        const prev = previous("Embers ", r.logprobs);
        r.logprobs.forEach((entry, i) => {
          const expected = oracleLogprobs(prev[i]!, 2);
          const chosen = expected[idOf(entry)]!;
          // Also where the sampled token is far below the top 20 that reach node-llama-cpp (probability-trim.ts).
          expect(entry.logprob).toBeCloseTo(chosen, 4);
          out.push(expected.filter((l) => l > chosen + 1e-6).length);
        });
      }
      return out;
    };
    expect(Math.max(...(await ranks({})))).toBeGreaterThanOrEqual(40);
    expect(Math.max(...(await ranks({ topK: 40 })))).toBeLessThan(40);
  });
});
