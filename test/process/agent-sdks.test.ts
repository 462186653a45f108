import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNpmStart, type StartedHearth } from "../helpers/npm-start.js";

/**
 * The clients agent frameworks are built on, each against `npm start` as a user runs it:
 * the openai SDK, the Vercel AI SDK (through its OpenAI provider's chat-completions model) and
 * LangChain (ChatOpenAI). What they send must be taken, not refused as unknown or dropped.
 */
const MODEL = "accounts/hearth/models/hearth-tiny";

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
});
