import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPM_VOCAB_TINY_ID, spmVocabTiny } from "../../../src/models/factory/random-spm-llama.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { testSpmModelDir } from "../../helpers/test-models.js";

const MODEL = `accounts/hearth/models/${SPM_VOCAB_TINY_ID}`;
/** The test Hearth's context (HEARTH_CONTEXT_SIZE). */
const CONTEXT = 512;

// echo and logprobs on /v1/completions through the official SDK, on spm-vocab-tiny: a
// SentencePiece vocabulary with byte fallback, and a BOS before every prompt that the echo leaves out.
describe("completions with echo on a SentencePiece model with a BOS", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth({
      env: { HEARTH_MODEL_DIR: testSpmModelDir, HEARTH_CONTEXT_SIZE: String(CONTEXT) },
    });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("echoes the prompt's pieces and bytes, the first scored after the BOS, and goes on with spaces", async () => {
    const r = await client.completions.create({
      model: MODEL,
      prompt: "the café",
      max_tokens: 2,
      temperature: 0,
      logit_bias: { [spmVocabTiny.id("▁sat")]: 100 },
      echo: true,
      logprobs: 1,
    });
    const choice = r.choices[0]!;
    expect(choice.text).toBe("the café sat sat");
    const lp = choice.logprobs!;
    expect(lp.tokens).toEqual([" the", " ca", "f", "\\xc3", "\\xa9", " sat", " sat"]);
    expect(lp.text_offset).toEqual([0, 3, 6, 7, 7, 8, 12]);
    expect(lp.token_logprobs!.every((l) => typeof l === "number")).toBe(true);
    expect(lp.top_logprobs![0]).not.toBeNull();
    // The BOS is read, not echoed.
    expect(r.usage?.prompt_tokens).toBe(6);
  });

  it('with context_length_exceeded_behavior "truncate", keeps the BOS and echoes the kept end after it', async () => {
    const ask = { model: MODEL, max_tokens: 8, temperature: 0, echo: true, logprobs: 0 };
    const prompt = "the cat sat on the mat. ".repeat(80);
    const r = await client.completions.create({
      ...ask,
      prompt,
      context_length_exceeded_behavior: "truncate",
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(r.usage?.prompt_tokens).toBe(CONTEXT - 8);
    const lp = r.choices[0]!.logprobs!;
    // All the prompt's tokens the model read but the BOS, then the generated ones.
    expect(lp.tokens).toHaveLength(CONTEXT - 8 - 1 + 8);
    const echoed = r.choices[0]!.text.slice(0, lp.text_offset![CONTEXT - 9]);
    expect(prompt.endsWith(echoed)).toBe(true);
    expect(echoed.startsWith("sat on the mat. the cat")).toBe(true);
    // What it read is what a prompt of the echoed text alone reads (it tokenizes into the kept
    // tokens): the BOS, then the kept end, each token scored after the same ones.
    const whole = await client.completions.create({ ...ask, prompt: echoed });
    expect(whole.usage?.prompt_tokens).toBe(CONTEXT - 8);
    expect(whole.choices[0]!.text).toBe(r.choices[0]!.text);
    const wholeLp = whole.choices[0]!.logprobs!;
    expect(wholeLp.tokens).toEqual(lp.tokens);
    lp.token_logprobs!.forEach((l, i) => expect(l).toBeCloseTo(wholeLp.token_logprobs![i]!, 4));
  });
});
