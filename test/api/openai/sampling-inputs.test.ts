import OpenAI from "openai";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

// Sampling fields and token inputs through the official SDK (issue 27, part 4).
describe("sampling and inputs through the OpenAI SDK", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth();
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const badRequest = async (request: Promise<unknown>) => {
    const error = await request.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return error as InstanceType<typeof OpenAI.BadRequestError>;
  };

  it("honours logit_bias: -100 bans a token, +100 forces one, on completions and chat", async () => {
    const prompt = "The hearth ";
    expect(greedyText(prompt, 20)).toContain("t");
    const banned = await client.completions.create({
      model: MODEL,
      prompt,
      max_tokens: 20,
      temperature: 0,
      logit_bias: { "116": -100 },
    });
    expect(banned.choices[0]!.text).toHaveLength(20);
    expect(banned.choices[0]!.text).not.toContain("t");
    const forced = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 12,
      temperature: 1,
      seed: 5,
      logit_bias: { "122": 100 },
    });
    expect(forced.choices[0]!.message.content).toBe("z".repeat(12));
  });

  it("refuses logit_bias with a token outside the vocabulary, a bad key or a bias past ±100", async () => {
    const outside = await badRequest(
      client.completions.create({ model: MODEL, prompt: "a", max_tokens: 2, logit_bias: { "257": 1 } }),
    );
    expect(outside.param).toBe("logit_bias");
    expect(outside.message).toMatch(/token 257/);
    const streamed = await badRequest(
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "a" }],
        max_tokens: 2,
        stream: true,
        logit_bias: { "99999": -100 },
      }),
    );
    expect(streamed.param).toBe("logit_bias");
    const key = await badRequest(
      client.completions.create({ model: MODEL, prompt: "a", logit_bias: { "-1": 1 } as Record<string, number> }),
    );
    expect(key.param).toMatch(/^logit_bias/);
    const far = await badRequest(client.completions.create({ model: MODEL, prompt: "a", logit_bias: { "97": 101 } }));
    expect(far.param).toMatch(/^logit_bias/);
  });

  it("honours typical_p: after a space, the two likeliest bytes of hearth-tiny never follow at 0.2", async () => {
    // typical_p is not in the SDK's types; the SDK sends extra body fields as they are.
    const sample = (seed: number, extra: Record<string, unknown>) =>
      client.completions.create({ model: MODEL, prompt: "The ", max_tokens: 40, temperature: 1, seed, ...extra });
    const seeds = [21, 22, 23, 24, 25, 26];
    const typical = await Promise.all(
      seeds.map(async (seed) => (await sample(seed, { typical_p: 0.2 })).choices[0]!.text),
    );
    const plain = await Promise.all(seeds.map(async (seed) => (await sample(seed, {})).choices[0]!.text));
    expect(plain.some((text) => / [ta]/.test(text))).toBe(true);
    expect(typical.some((text) => / [ta]/.test(text))).toBe(false);
    const chat = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Tell me" }],
      max_tokens: 40,
      temperature: 1,
      seed: 3,
      typical_p: 0.2,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(chat.choices[0]!.message.content).not.toMatch(/ [ta]/);
    const invalid = await badRequest(sample(1, { typical_p: 0 }));
    expect(invalid.param).toBe("typical_p");
  });

  it("takes prompts as token IDs, one array or a list of them, and answers as for the text", async () => {
    const text = "The hearth ";
    const ids = [...Buffer.from(text)];
    const one = await client.completions.create({ model: MODEL, prompt: ids, max_tokens: 16, temperature: 0 });
    expect(one.choices[0]!.text).toBe(greedyText(text, 16));
    expect(one.usage?.prompt_tokens).toBe(ids.length);
    const list = await client.completions.create({
      model: MODEL,
      prompt: [ids, [...Buffer.from("A fire")]],
      max_tokens: 8,
      temperature: 0,
    });
    expect(list.choices.map((c) => c.text)).toEqual([greedyText(text, 8), greedyText("A fire", 8)]);
    const outside = await badRequest(
      client.completions.create({
        model: MODEL,
        prompt: [
          [65, 66],
          [67, 999],
        ],
        max_tokens: 2,
      }),
    );
    expect(outside.param).toBe("prompt");
    expect(outside.message).toMatch(/token 999/);
    const negative = await badRequest(client.completions.create({ model: MODEL, prompt: [65, -1], max_tokens: 2 }));
    expect(negative.param).toMatch(/^prompt/);
  });

  it("embeds token-ID inputs as it embeds their text", async () => {
    const texts = ["aab", "the hearth"];
    const byText = await client.embeddings.create({ model: MODEL, input: texts, encoding_format: "float" });
    const byIds = await client.embeddings.create({
      model: MODEL,
      input: texts.map((t) => [...Buffer.from(t)]),
      encoding_format: "float",
    });
    expect(byIds.data.map((d) => d.embedding)).toEqual(byText.data.map((d) => d.embedding));
    expect(byIds.usage.prompt_tokens).toBe(13);
    const single = await client.embeddings.create({ model: MODEL, input: [97, 97, 98], encoding_format: "float" });
    expect(single.data).toHaveLength(1);
    expect(single.data[0]!.embedding).toEqual(byText.data[0]!.embedding);
    const outside = await badRequest(client.embeddings.create({ model: MODEL, input: [[97], [300]] }));
    expect(outside.param).toBe("input");
    expect(outside.message).toMatch(/token 300/);
  });

  it("refuses a prompt too long for the context with code context_length_exceeded, streamed or not", async () => {
    const long = "x".repeat(600);
    const messages = [{ role: "user" as const, content: long }];
    const refusals = [
      await badRequest(client.completions.create({ model: MODEL, prompt: long, max_tokens: 8 })),
      await badRequest(client.completions.create({ model: MODEL, prompt: long, max_tokens: 8, stream: true })),
      await badRequest(client.chat.completions.create({ model: MODEL, messages, max_tokens: 8 })),
      await badRequest(client.chat.completions.create({ model: MODEL, messages, stream: true })),
      await badRequest(client.completions.create({ model: MODEL, prompt: "a", max_tokens: 600 })),
    ];
    for (const refusal of refusals) expect(refusal.code).toBe("context_length_exceeded");
    expect(refusals.map((r) => r.param)).toEqual(["prompt", "prompt", "prompt", "prompt", "max_tokens"]);
  });

  it('truncates the prompt\'s beginning with context_length_exceeded_behavior "truncate"', async () => {
    // Not in the SDK's types; sent as it is.
    const truncate = { context_length_exceeded_behavior: "truncate" } as Record<string, unknown>;
    const cut = await client.completions.create({
      model: MODEL,
      prompt: `${"x".repeat(600)}The `,
      max_tokens: 8,
      temperature: 0,
      ...truncate,
    });
    expect(cut.choices[0]!.text).toBe(greedyText("The ", 8));
    expect(cut.usage).toMatchObject({ prompt_tokens: 512 - 8, completion_tokens: 8 });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "x".repeat(600) }],
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      ...truncate,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.prompt_tokens).toBe(256);
    const wrong = await badRequest(
      client.completions.create({ model: MODEL, prompt: "a", context_length_exceeded_behavior: "cut" } as never),
    );
    expect(wrong.param).toBe("context_length_exceeded_behavior");
  });

  it("generates images with client.images.generate, served by an image model", async () => {
    const sketch = "accounts/hearth/models/hearth-sketch";
    const prompt = "a red circle on a white background";
    const result = await client.images.generate({ model: sketch, prompt, n: 2, size: "128x128" as never });
    expect(result.created).toBeGreaterThan(0);
    expect(result.data).toHaveLength(2);
    for (const image of result.data ?? []) {
      const png = Buffer.from(image.b64_json!, "base64");
      expect(await sharp(png).metadata()).toMatchObject({ format: "png", width: 128, height: 128 });
      const raw = await sharp(png).removeAlpha().raw().toBuffer();
      let red = 0;
      for (let i = 0; i < raw.length; i += 3) if (raw[i]! > 140 && raw[i]! > raw[i + 1]! + 60) red++;
      expect(red / (raw.length / 3)).toBeGreaterThan(0.02);
    }
    const b64 = await client.images.generate({ model: sketch, prompt, response_format: "b64_json" });
    expect(await sharp(Buffer.from(b64.data![0]!.b64_json!, "base64")).metadata()).toMatchObject({ width: 512 });
  });

  it("refuses what images.generate cannot honour, by name", async () => {
    const sketch = "accounts/hearth/models/hearth-sketch";
    const refused = async (extra: Record<string, unknown>) =>
      (await badRequest(client.images.generate({ model: sketch, prompt: "a circle", ...extra } as never))).param;
    expect(await refused({ response_format: "url" })).toBe("response_format");
    expect(await refused({ quality: "hd" })).toBe("quality");
    expect(await refused({ style: "vivid" })).toBe("style");
    expect(await refused({ n: 5 })).toBe("n");
    expect(await refused({ size: "100x100" })).toBe("size");
    expect(await refused({ size: "big" })).toBe("size");
    expect(await refused({ size: "4096x4096" })).toBe("size");
    expect(await refused({ size: "2048x512" })).toBe("size"); // past hearth-sketch's 1024
    expect(await refused({ model: MODEL })).toBe("model");
  });
});
