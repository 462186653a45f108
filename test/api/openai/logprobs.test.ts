import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDefaultChat } from "../../../src/workers/engine/default-chat-template.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { expectOracleMatch, oracleLogprobs, tokenId } from "../../helpers/logprob-oracle.js";
import { greedyText } from "../../helpers/oracle.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

/** The token before each of `tokens`: the prompt's last byte, then each token in turn. */
function previous(prompt: string, tokens: readonly string[]): number[] {
  const last = Buffer.from(prompt).at(-1)!;
  return tokens.map((_, i) => (i === 0 ? last : tokenId(tokens[i - 1]!)));
}

// Log probabilities through the official SDK, checked against the bigram oracle.
describe("logprobs through the OpenAI SDK", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth();
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const messages = [{ role: "user" as const, content: "Tell me about the fire." }];
  const chatPrompt = renderDefaultChat(messages);

  it("chat: each token's logprob and its top_logprobs are the oracle's", async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 20,
      temperature: 0.8,
      top_p: 0.5,
      seed: 3,
      logprobs: true,
      top_logprobs: 4,
    });
    const choice = r.choices[0]!;
    const content = choice.logprobs!.content!;
    expect(choice.logprobs!.refusal).toBeNull();
    expect(content.map((t) => t.token).join("")).toBe(choice.message.content);
    expect(content).toHaveLength(20);
    const prev = previous(
      chatPrompt,
      content.map((t) => t.token),
    );
    content.forEach((t, i) => {
      expect(t.bytes).toEqual([...Buffer.from(t.token)]);
      expectOracleMatch(t, t.top_logprobs, oracleLogprobs(prev[i]!, 0.8), 4);
      for (const alternative of t.top_logprobs) expect(alternative.bytes).toHaveLength(1);
    });
  });

  it("chat, streamed: each chunk carries its own tokens' logprobs, the same as unstreamed", async () => {
    const ask = { model: MODEL, messages, max_tokens: 30, temperature: 0, logprobs: true, top_logprobs: 2 } as const;
    const whole = await client.chat.completions.create(ask);
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    const tokens: OpenAI.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason === null) {
        expect(choice.logprobs?.content).toBeDefined();
        // A chunk's tokens are those whose text it completes.
        const chunkText = choice.delta.content ?? "";
        expect(choice.logprobs!.content!.map((t) => t.token).join("")).toBe(chunkText);
      } else expect(choice.logprobs).toBeNull();
      text += choice.delta.content ?? "";
      tokens.push(...(choice.logprobs?.content ?? []));
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(tokens).toEqual(whole.choices[0]!.logprobs!.content);
    const prev = previous(
      chatPrompt,
      tokens.map((t) => t.token),
    );
    tokens.forEach((t, i) => expectOracleMatch(t, t.top_logprobs, oracleLogprobs(prev[i]!, 1), 2));
  });

  it("chat without logprobs answers logprobs: null", async () => {
    const r = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 3, temperature: 0 });
    expect(r.choices[0]!.logprobs).toBeNull();
  });

  it("completions: the legacy shape, the sampled token always among top_logprobs", async () => {
    const prompt = "The hearth ";
    const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 16, temperature: 0, logprobs: 3 });
    const choice = r.choices[0]!;
    expect(choice.text).toBe(greedyText(prompt, 16));
    const lp = choice.logprobs!;
    expect(lp.tokens!.join("")).toBe(choice.text);
    expect(lp.text_offset).toEqual(lp.tokens!.map((_, i) => i));
    const prev = previous(prompt, lp.tokens!);
    lp.tokens!.forEach((token, i) => {
      const top = Object.entries(lp.top_logprobs![i]!).map(([t, logprob]) => ({ token: t, logprob }));
      // Greedy: the sampled token is the most likely, so the dictionary holds just the top 3.
      expectOracleMatch({ token, logprob: lp.token_logprobs![i]! }, top, oracleLogprobs(prev[i]!, 1), 3);
    });
  });

  it("refuses out-of-range values and top_logprobs without logprobs, naming the field", async () => {
    const refused = async (call: Promise<unknown>, param: string) => {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
    };
    const chat = { model: MODEL, messages, max_tokens: 2 };
    await refused(client.chat.completions.create({ ...chat, logprobs: true, top_logprobs: 21 }), "top_logprobs");
    await refused(client.chat.completions.create({ ...chat, top_logprobs: 2 }), "top_logprobs");
    await refused(client.chat.completions.create({ ...chat, logprobs: false, top_logprobs: 0 }), "top_logprobs");
    const completion = { model: MODEL, prompt: "x", max_tokens: 2 };
    await refused(client.completions.create({ ...completion, logprobs: 6 }), "logprobs");
  });
});
