import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { Ajv } from "ajv";
import { generateObject, generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startNpmStart, type StartedHearth } from "../helpers/npm-start.js";

/**
 * The clients agent frameworks are built on, each against `npm start` as a user runs it:
 * the openai SDK, the Vercel AI SDK (through its OpenAI provider's chat-completions model) and
 * LangChain (ChatOpenAI). What they send must be taken, not refused as unknown or dropped.
 * Each completes a tool call, a structured output and a logprobs request (issue 27); on
 * hearth-tiny, a bigram model, a call and an object come from the grammar, not from sense.
 */
const MODEL = "accounts/hearth/models/hearth-tiny";

/** A tool's arguments, with bounded strings: a random model writes inside a string until told it ends. */
const WEATHER = {
  type: "object",
  properties: { city: { type: "string", maxLength: 12 }, days: { type: "integer" } },
  required: ["city", "days"],
  additionalProperties: false,
} as const;
const validWeather = new Ajv().compile(WEATHER);
/** The structured outputs' shape. */
const Fire = z.object({ name: z.string().max(12), lit: z.boolean(), logs: z.number().int() });

describe("agent SDKs against npm start", () => {
  let hearth: StartedHearth;
  let baseURL: string;
  let apiKey: string;

  beforeAll(async () => {
    hearth = await startNpmStart();
    baseURL = `http://127.0.0.1:${hearth.port}/v1`;
    apiKey = await hearth.adminKey();
  }, 120_000);
  afterAll(() => hearth?.close());

  it("the openai SDK chats, streamed and not", async () => {
    const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    const once = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Say hi" }],
      max_tokens: 6,
      temperature: 0,
    });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Say hi" }],
      max_tokens: 6,
      temperature: 0,
      stream: true,
    });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    expect(once.choices[0]!.message.content).toBe(streamed);
    expect(streamed.length).toBeGreaterThan(0);
  });

  it("the AI SDK generates and streams text", async () => {
    const provider = createOpenAI({ baseURL, apiKey });
    const model = provider.chat(MODEL);
    const once = await generateText({ model, prompt: "Say hi", maxOutputTokens: 6, temperature: 0, maxRetries: 0 });
    const stream = streamText({ model, prompt: "Say hi", maxOutputTokens: 6, temperature: 0, maxRetries: 0 });
    let streamed = "";
    for await (const part of stream.textStream) streamed += part;
    expect(once.text).toBe(streamed);
    expect(once.text.length).toBeGreaterThan(0);
    expect(once.usage.outputTokens).toBe(6);
  });

  it("LangChain invokes and streams a chat model", async () => {
    const chat = new ChatOpenAI({
      model: MODEL,
      apiKey,
      configuration: { baseURL },
      temperature: 0,
      maxTokens: 6,
      maxRetries: 0,
    });
    const once = await chat.invoke("Say hi");
    let streamed = "";
    for await (const chunk of await chat.stream("Say hi")) streamed += chunk.content;
    expect(once.content).toBe(streamed);
    expect(String(once.content).length).toBeGreaterThan(0);
  });

  it("the openai SDK calls a tool, fills a schema and reports logprobs", async () => {
    const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    const call = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: WEATHER } }],
      tool_choice: "required",
      // One call: a bigram model given the choice goes on making calls until max_tokens.
      parallel_tool_calls: false,
      max_tokens: 400,
      seed: 3,
    });
    expect(call.choices[0]!.finish_reason).toBe("tool_calls");
    const made = call.choices[0]!.message.tool_calls![0]!;
    expect(made.type === "function" && made.function.name).toBe("get_weather");
    if (made.type === "function") expect(validWeather(JSON.parse(made.function.arguments))).toBe(true);

    const parsed = await client.chat.completions.parse({
      model: MODEL,
      messages: [{ role: "user", content: "Describe the fire." }],
      response_format: zodResponseFormat(Fire, "fire"),
      max_tokens: 400,
      seed: 3,
    });
    expect(Fire.parse(parsed.choices[0]!.message.parsed)).toBeTruthy();

    const scored = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 5,
      temperature: 0,
      logprobs: true,
      top_logprobs: 3,
    });
    const content = scored.choices[0]!.logprobs!.content!;
    expect(content.map((t) => t.token).join("")).toBe(scored.choices[0]!.message.content);
    for (const t of content) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(3);
    }
  });

  it("the AI SDK calls a tool, generates an object and reports logprobs", async () => {
    const model = createOpenAI({ baseURL, apiKey }).chat(MODEL);
    const called = await generateText({
      model,
      prompt: "Weather in Oslo?",
      tools: { get_weather: tool({ inputSchema: jsonSchema(WEATHER) }) },
      toolChoice: "required",
      providerOptions: { openai: { parallelToolCalls: false } },
      maxOutputTokens: 400,
      seed: 3,
      maxRetries: 0,
    });
    expect(called.finishReason).toBe("tool-calls");
    expect(called.toolCalls[0]!.toolName).toBe("get_weather");
    expect(validWeather(called.toolCalls[0]!.input)).toBe(true);

    const object = await generateObject({
      model,
      schema: Fire,
      prompt: "Describe the fire.",
      maxOutputTokens: 400,
      seed: 3,
      maxRetries: 0,
    });
    expect(Fire.parse(object.object)).toEqual(object.object);

    const scored = await generateText({
      model,
      prompt: "Hi",
      maxOutputTokens: 5,
      temperature: 0,
      maxRetries: 0,
      providerOptions: { openai: { logprobs: 2 } },
    });
    const logprobs = scored.providerMetadata?.openai?.logprobs as { token: string; top_logprobs: unknown[] }[];
    expect(logprobs.map((t) => t.token).join("")).toBe(scored.text);
    expect(logprobs[0]!.top_logprobs).toHaveLength(2);
  });

  it("LangChain binds a tool, returns structured output and reports logprobs", async () => {
    const chat = (fields: object = {}) =>
      new ChatOpenAI({ model: MODEL, apiKey, configuration: { baseURL }, maxTokens: 400, maxRetries: 0, ...fields });
    const withTool = chat().bindTools(
      [{ type: "function", function: { name: "get_weather", description: "The weather", parameters: WEATHER } }],
      { tool_choice: "required", parallel_tool_calls: false },
    );
    const called = await withTool.invoke("Weather in Oslo?");
    expect(called.tool_calls![0]!.name).toBe("get_weather");
    expect(validWeather(called.tool_calls![0]!.args)).toBe(true);

    const structured = await chat()
      .withStructuredOutput(Fire, { name: "fire", method: "jsonSchema" })
      .invoke("Describe the fire.");
    expect(Fire.parse(structured)).toEqual(structured);

    const scored = await chat({ maxTokens: 5, temperature: 0, logprobs: true, topLogprobs: 2 }).invoke("Hi");
    const content = (scored.response_metadata.logprobs as { content: { token: string; top_logprobs: unknown[] }[] })
      .content;
    expect(content.map((t) => t.token).join("")).toBe(scored.content);
    expect(content[0]!.top_logprobs).toHaveLength(2);
  });
});
