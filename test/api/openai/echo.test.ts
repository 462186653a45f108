import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { expectOracleMatch, oracleLogprobs, tokenId } from "../../helpers/logprob-oracle.js";
import { greedyText } from "../../helpers/oracle.js";

const MODEL = "accounts/hearth/models/hearth-tiny";
/** The test Hearth's context (HEARTH_CONTEXT_SIZE). */
const CONTEXT = 512;

type Logprobs = OpenAI.Completions.CompletionChoice.Logprobs;

/** hearth-tiny's tokens of a text: its bytes. */
const ids = (text: string) => [...Buffer.from(text)];

/**
 * An echoed choice's legacy logprobs against the bigram oracle: the first token has none, each
 * other has the oracle's logprob after the token before it, and its `top_logprobs` are the `top`
 * most likely tokens there, plus itself when it is not among them.
 */
function expectScored(lp: Logprobs, temperature: number, top: number) {
  const tokens = lp.tokens!;
  expect(lp.token_logprobs![0]).toBeNull();
  expect(lp.top_logprobs![0]).toBeNull();
  tokens.slice(1).forEach((token, j) => {
    const i = j + 1;
    const entries = Object.entries(lp.top_logprobs![i]!).map(([t, logprob]) => ({ token: t, logprob }));
    const best = entries.sort((a, b) => b.logprob - a.logprob).slice(0, top);
    const among = best.some((b) => tokenId(b.token) === tokenId(token));
    expect(entries).toHaveLength(among ? top : top + 1);
    const expected = oracleLogprobs(tokenId(tokens[i - 1]!), temperature);
    expectOracleMatch({ token, logprob: lp.token_logprobs![i]! }, best, expected, top);
  });
}

/** A streamed completion's one choice, put together: its text, and its tokens' logprobs column by column. */
async function streamed(stream: AsyncIterable<OpenAI.Completion>) {
  let text = "";
  const lp = { tokens: [] as string[], text_offset: [] as number[], token_logprobs: [] as (number | null)[] };
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice || choice.finish_reason !== null) continue;
    text += choice.text;
    if (!choice.logprobs) continue;
    lp.tokens.push(...choice.logprobs.tokens!);
    lp.text_offset.push(...choice.logprobs.text_offset!);
    lp.token_logprobs.push(...(choice.logprobs.token_logprobs! as (number | null)[]));
  }
  return { text, lp };
}

// echo on /v1/completions through the official SDK: the prompt as the model read it, checked
// against the bigram oracle (hearth-tiny's tokens are bytes, so its text of token IDs is exact).
describe("completions with echo", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth();
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("starts with the prompt's text and tokens, the first with a null logprob", async () => {
    const prompt = "Sparks fly";
    const r = await client.completions.create({
      model: MODEL,
      prompt,
      max_tokens: 6,
      temperature: 0.6,
      top_k: 2,
      seed: 9,
      echo: true,
      logprobs: 1,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const choice = r.choices[0]!;
    expect(choice.text.startsWith(prompt)).toBe(true);
    expect(choice.text).toHaveLength(prompt.length + 6);
    const lp = choice.logprobs!;
    expect(lp.tokens!.join("")).toBe(choice.text);
    expect(lp.text_offset).toEqual(lp.tokens!.map((_, i) => i));
    expectScored(lp, 0.6, 1);
    // The echo alone, without logprobs.
    const plain = await client.completions.create({ model: MODEL, prompt, max_tokens: 4, temperature: 0, echo: true });
    expect(plain.choices[0]!.text).toBe(prompt + greedyText(prompt, 4));
    expect(plain.choices[0]!.logprobs).toBeNull();
  });

  it("echoes a token-ID prompt as the model's text of those tokens, and exactly those tokens", async () => {
    // é is two tokens (bytes) here: the echo is the model's text of them, not the IDs.
    const text = "Café fire";
    const plain = await client.completions.create({
      model: MODEL,
      prompt: ids(text),
      max_tokens: 5,
      temperature: 0,
      echo: true,
    });
    expect(plain.choices[0]!.text).toBe(text + greedyText(text, 5));
    expect(plain.usage?.prompt_tokens).toBe(ids(text).length);

    const prompt = "Sparks fly";
    const r = await client.completions.create({
      model: MODEL,
      prompt: ids(prompt),
      max_tokens: 6,
      temperature: 0.6,
      seed: 4,
      echo: true,
      logprobs: 2,
    });
    const choice = r.choices[0]!;
    const lp = choice.logprobs!;
    expect(choice.text.startsWith(prompt)).toBe(true);
    expect(lp.tokens!.slice(0, prompt.length).map(tokenId)).toEqual(ids(prompt));
    expect(lp.tokens).toHaveLength(prompt.length + 6);
    expect(lp.tokens!.join("")).toBe(choice.text);
    // Generated tokens' offsets count on from the echo's end.
    expect(lp.text_offset).toEqual(lp.tokens!.map((_, i) => i));
    expectScored(lp, 0.6, 2);
  });

  it("echoes each of a list of token-ID prompts in its own choices", async () => {
    const prompts = ["Ash and ", "Embers"];
    const r = await client.completions.create({
      model: MODEL,
      prompt: prompts.map(ids),
      n: 2,
      max_tokens: 5,
      temperature: 0,
      echo: true,
      logprobs: 1,
    });
    expect(r.choices).toHaveLength(4);
    for (const choice of r.choices) {
      const prompt = prompts[Math.floor(choice.index / 2)]!;
      expect(choice.text).toBe(prompt + greedyText(prompt, 5));
      const lp = choice.logprobs!;
      expect(lp.tokens!.map(tokenId)).toEqual(ids(choice.text));
      expect(lp.text_offset).toEqual(lp.tokens!.map((_, i) => i));
      expectScored(lp, 0, 1);
    }
    expect(r.usage?.prompt_tokens).toBe(prompts.join("").length);
  });

  it.each([
    ["text", "Ash and "],
    ["token IDs", ids("Ash and ")],
  ])("streamed with a prompt as %s, gives the same text and tokens as unstreamed", async (_, prompt) => {
    const ask = { model: MODEL, prompt, max_tokens: 12, temperature: 0, echo: true, logprobs: 2 };
    const whole = await client.completions.create(ask);
    const { text, lp } = await streamed(await client.completions.create({ ...ask, stream: true }));
    const expected = whole.choices[0]!.logprobs!;
    expect(text).toBe(whole.choices[0]!.text);
    expect(text).toBe(`Ash and ${greedyText("Ash and ", 12)}`);
    expect(lp.tokens).toEqual(expected.tokens);
    expect(lp.text_offset).toEqual(expected.text_offset);
    expect(lp.token_logprobs).toEqual(expected.token_logprobs);
  });

  it('with context_length_exceeded_behavior "truncate", echoes only the part the model read', async () => {
    const prompt = `${"x".repeat(600)}The `;
    const kept = prompt.slice(-(CONTEXT - 8));
    const truncate = { context_length_exceeded_behavior: "truncate" } as Record<string, unknown>;
    const ask = { model: MODEL, max_tokens: 8, temperature: 0, echo: true, ...truncate };
    const r = await client.completions.create({
      ...ask,
      prompt,
      logprobs: 0,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const choice = r.choices[0]!;
    expect(choice.text).toBe(kept + greedyText(prompt, 8));
    expect(r.usage?.prompt_tokens).toBe(kept.length);
    const lp = choice.logprobs!;
    expect(lp.tokens!.join("")).toBe(choice.text);
    expect(lp.text_offset).toEqual(lp.tokens!.map((_, i) => i));
    expectScored(lp, 0, 0);
    // Token IDs, streamed: the same kept part, as text.
    const stream = await client.completions.create({
      ...ask,
      prompt: ids(prompt),
      stream: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    expect((await streamed(stream)).text).toBe(choice.text);
  });
});
