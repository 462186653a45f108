import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDefaultChat, defaultChatStops } from "../../../src/workers/engine/default-chat-template.js";
import type { JobFinished } from "../../../src/workers/worker.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";
import { testDatabaseBackends } from "../../helpers/test-databases.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

// The whole OpenAI surface, through the official SDK, on each database backend.
describe.each(testDatabaseBackends)("OpenAI SDK against Hearth (%s)", (backend) => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth({ backend });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("lists the base model", async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).toContain(MODEL);
    expect(models.data.find((m) => m.id === MODEL)?.owned_by).toBe("hearth");
  });

  it("gets one model by its name, URL-encoded as the SDK sends it or as a path; another is a 404", async () => {
    const model = await client.models.retrieve(MODEL);
    expect(model).toMatchObject({ id: MODEL, object: "model", owned_by: "hearth", kind: "base", parent: null });
    const get = (path: string) =>
      fetch(`${hearth.baseURL}${path}`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    const raw = await get(`/models/${MODEL}`);
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual(model);
    expect((await get(`/models/${encodeURIComponent(MODEL)}`)).status).toBe(200);
    const missing = await client.models.retrieve("accounts/hearth/models/no-such-model").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).message).toMatch(/does not exist/);
    expect((await get("/models/accounts/hearth/models/no-such-model")).status).toBe(404);
  });

  it("honours min_p: at 1, hot sampling keeps to the most likely token, as greedy does", async () => {
    const prompt = "The hearth ";
    // min_p is not in the SDK's types; the SDK sends extra body fields as they are.
    const hot = (seed: number, extra: Record<string, unknown>) =>
      client.completions.create({ model: MODEL, prompt, max_tokens: 24, temperature: 1.8, seed, ...extra });
    for (const seed of [11, 12, 13]) {
      expect((await hot(seed, { min_p: 1 })).choices[0]!.text).toBe(greedyText(prompt, 24));
    }
    const without = await Promise.all([11, 12, 13].map(async (seed) => (await hot(seed, {})).choices[0]!.text));
    expect(without.some((text) => text !== greedyText(prompt, 24))).toBe(true);
  });

  it("completes greedily exactly as the bigram table predicts", async () => {
    const prompt = "The hearth ";
    const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 40, temperature: 0 });
    expect(r.object).toBe("text_completion");
    expect(r.model).toBe(MODEL);
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0]!.text).toBe(greedyText(prompt, 40));
    expect(r.choices[0]!.finish_reason).toBe("length");
    expect(r.usage).toEqual({
      prompt_tokens: Buffer.byteLength(prompt),
      completion_tokens: 40,
      total_tokens: Buffer.byteLength(prompt) + 40,
      prompt_tokens_details: { cached_tokens: expect.any(Number) },
    });
  });

  it("streams the same text in several chunks, usage on the finishing chunk", async () => {
    const prompt = "A fire in the ";
    const full = await client.completions.create({ model: MODEL, prompt, max_tokens: 30, temperature: 0 });
    const stream = await client.completions.create({
      model: MODEL,
      prompt,
      max_tokens: 30,
      temperature: 0,
      stream: true,
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.text) pieces.push(choice.text);
      if (choice?.finish_reason) {
        finish = choice.finish_reason;
        usage = chunk.usage;
      }
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(full.choices[0]!.text);
    expect(finish).toBe("length");
    expect(usage).toMatchObject({ completion_tokens: 30 });
  });

  it("handles UTF-8 prompts and stop sequences", async () => {
    const prompt = "café ";
    const expected = greedyText(prompt, 60);
    const stop = expected.slice(10, 12);
    const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 60, temperature: 0, stop });
    expect(r.choices[0]!.text).toBe(expected.slice(0, expected.indexOf(stop)));
    expect(r.choices[0]!.finish_reason).toBe("stop");
  });

  it("answers several prompts and n choices in one request", async () => {
    const r = await client.completions.create({
      model: MODEL,
      prompt: ["One ", "Two "],
      n: 2,
      max_tokens: 8,
      temperature: 0,
    });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(r.choices[0]!.text).toBe(greedyText("One ", 8));
    expect(r.choices[1]!.text).toBe(greedyText("One ", 8));
    expect(r.choices[2]!.text).toBe(greedyText("Two ", 8));
    expect(r.usage?.completion_tokens).toBe(32);
  });

  it("chats with the default template, streamed and not", async () => {
    const messages = [
      { role: "system" as const, content: "You are terse." },
      { role: "user" as const, content: "Tell me about the fire." },
    ];
    const expected = cutAtStops(greedyText(renderDefaultChat(messages), 48), defaultChatStops);
    const r = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 48, temperature: 0 });
    expect(r.object).toBe("chat.completion");
    expect(r.choices[0]!.message.role).toBe("assistant");
    expect(r.choices[0]!.message.content).toBe(expected);

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 48,
      temperature: 0,
      stream: true,
    });
    const pieces: string[] = [];
    let role: string | undefined;
    for await (const chunk of stream) {
      role ??= chunk.choices[0]?.delta.role;
      if (chunk.choices[0]?.delta.content) pieces.push(chunk.choices[0].delta.content);
    }
    expect(role).toBe("assistant");
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(expected);
  });

  it("reports the prompt tokens an earlier request left cached, chat and completions, streamed and not", async () => {
    const system = "You keep the hearth: tend the fire, bank the embers and keep the kettle warm. ".repeat(4);
    const ask = (question: string) => [
      { role: "system" as const, content: system },
      { role: "user" as const, content: question },
    ];
    const shared = renderDefaultChat(ask("")).indexOf(system) + Buffer.byteLength(system);
    const first = await client.chat.completions.create({
      model: MODEL,
      messages: ask("Where is the fire?"),
      max_tokens: 20,
      temperature: 0,
    });
    // At most a template's opening that an earlier chat left: never this system prompt.
    expect(first.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(shared);
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: ask("Is the kettle warm?"),
      max_tokens: 20,
      temperature: 0,
    });
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThanOrEqual(shared);
    expect(cached).toBeLessThan(second.usage!.prompt_tokens);
    const expected = cutAtStops(greedyText(renderDefaultChat(ask("Is the kettle warm?")), 20), defaultChatStops);
    expect(second.choices[0]!.message.content).toBe(expected);

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: ask("Is the kettle warm?"),
      max_tokens: 20,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(expected);
    expect(usage!.prompt_tokens_details!.cached_tokens).toBe(usage!.prompt_tokens - 1);

    const prompt = `${system}The kettle `;
    await client.completions.create({ model: MODEL, prompt, max_tokens: 4, temperature: 0 });
    const completion = await client.completions.create({ model: MODEL, prompt, max_tokens: 30, temperature: 0 });
    expect(completion.usage!.prompt_tokens_details?.cached_tokens).toBe(Buffer.byteLength(prompt) - 1);
    expect(completion.choices[0]!.text).toBe(greedyText(prompt, 30));
    const streamed = await client.completions.create({
      model: MODEL,
      prompt,
      max_tokens: 30,
      temperature: 0,
      stream: true,
    });
    let streamedUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of streamed) streamedUsage = chunk.usage ?? streamedUsage;
    expect(streamedUsage!.prompt_tokens_details?.cached_tokens).toBe(Buffer.byteLength(prompt) - 1);
  });

  it("sends a usage-only chunk with stream_options.include_usage", async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 5,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 5 });
  });

  it("embeds: similar texts are closer than unrelated ones; base64 is the same vector", async () => {
    const inputs = [
      "the fire burns in the hearth of the house",
      "a fire burning in the hearth of a house",
      "zzzz qqqq 1234 !!!! xxxx",
    ];
    const r = await client.embeddings.create({ model: MODEL, input: inputs, encoding_format: "float" });
    expect(r.object).toBe("list");
    expect(r.data).toHaveLength(3);
    const [a, b, c] = r.data.map((d) => d.embedding);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(r.usage.prompt_tokens).toBe(inputs.reduce((s, t) => s + Buffer.byteLength(t), 0));

    const raw = await fetch(`${hearth.baseURL}/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: inputs[0], encoding_format: "base64" }),
    }).then((res) => res.json() as Promise<{ data: { embedding: string }[] }>);
    const bytes = Buffer.from(raw.data[0]!.embedding, "base64");
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(decoded).toHaveLength(a!.length);
    decoded.forEach((x, i) => expect(x).toBeCloseTo(a![i]!, 6));

    // The SDK asks for base64 by default and decodes it itself.
    const sdk = await client.embeddings.create({ model: MODEL, input: inputs[0]! });
    sdk.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(a![i]!, 6));

    // hearth-tiny's features are byte counts: the first 128 are ASCII.
    const small = await client.embeddings.create({
      model: MODEL,
      input: inputs[0]!,
      dimensions: 128,
      encoding_format: "float",
    });
    const head = a!.slice(0, 128);
    const norm = Math.hypot(...head);
    expect(small.data[0]!.embedding).toHaveLength(128);
    small.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(head[i]! / norm, 5));
  });

  it("keeps 20 concurrent streams apart", async () => {
    const prompts = Array.from({ length: 20 }, (_, i) => `Prompt ${i}: the ${"abcdefghijklmnopqrst"[i]}`);
    const texts = await Promise.all(
      prompts.map(async (prompt) => {
        const stream = await client.completions.create({
          model: MODEL,
          prompt,
          max_tokens: 24,
          temperature: 0,
          stream: true,
        });
        let text = "";
        for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
        return text;
      }),
    );
    texts.forEach((text, i) => expect(text).toBe(greedyText(prompts[i]!, 24)));
  });

  // A stream whose client left may be resumed for ORPHAN_GRACE_MS (GET /v1/streams/<id>); then it stops.
  it("stops generating when the client aborts mid-stream, then takes the next job", async () => {
    const finished = new Promise<JobFinished>((resolve) => hearth.worker!.events.once("job-finished", resolve));
    const controller = new AbortController();
    const stream = await client.completions.create(
      // Eight long choices: longer than the grace, on a model this fast.
      { model: MODEL, prompt: "Abort ", max_tokens: 500, n: 8, temperature: 0, stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    // The SDK ends the iteration quietly once its signal aborts.
    for await (const chunk of stream) {
      received += chunk.choices[0]?.text?.length ?? 0;
      if (received >= 5) controller.abort();
    }
    expect(received).toBeGreaterThanOrEqual(5);
    const outcome = await finished;
    expect(outcome.outcome?.finishReasons).toContain("cancelled");
    expect(outcome.outcome!.usage.completionTokens).toBeLessThan(8 * 500);

    const next = await client.completions.create({ model: MODEL, prompt: "Next ", max_tokens: 5, temperature: 0 });
    expect(next.choices[0]!.text).toBe(greedyText("Next ", 5));
  });

  it("stops generating when the client of a non-streamed request goes away", async () => {
    const finished = new Promise<JobFinished>((resolve) => hearth.worker!.events.once("job-finished", resolve));
    const controller = new AbortController();
    // Abort once the worker runs it (a job aborted while still queued is withdrawn, never run).
    hearth.worker!.events.once("job-started", () => setTimeout(() => controller.abort(), 10));
    const request = client.chat.completions.create(
      { model: MODEL, messages: [{ role: "user", content: "Go on" }], temperature: 0 },
      { signal: controller.signal },
    );
    await expect(request).rejects.toThrow();
    const outcome = await finished;
    expect(outcome.outcome?.finishReasons).toEqual(["cancelled"]);
  });
});

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

function cutAtStops(text: string, stops: readonly string[]): string {
  const at = Math.min(...stops.map((s) => (text.includes(s) ? text.indexOf(s) : text.length)));
  return text.slice(0, at);
}
