import { describe, expect, it } from "vitest";
import type { InferencePayload } from "../../src/jobs/jobs.js";
import { PREFIX_BLOCK_CHARS, PREFIX_BLOCK_TOKENS, promptPrefixKey } from "../../src/jobs/prompt-prefix.js";
import { RecentPrefixes } from "../../src/workers/recent-prefixes.js";

const sampling = { maxTokens: 8, temperature: 0, stop: [] };
const model = { name: "accounts/hearth/models/hearth-tiny", baseModelId: "hearth-tiny" };
const base = { requestId: "r", replyTo: "q", model, n: 1, sampling };
const completion = (prompt: string | number[], target = model): InferencePayload => ({
  ...base,
  model: target,
  kind: "completion",
  prompts: [prompt],
});
const chat = (...contents: string[]): InferencePayload => ({
  ...base,
  kind: "chat",
  messages: contents.map((content, i) => ({ role: i === 0 ? "system" : "user", content })),
});
const SYSTEM = "You answer questions about the hearth. ".repeat(30);

describe("promptPrefixKey", () => {
  it("is the same for prompts that share their first block, and differs where the block does", () => {
    const long = "x".repeat(PREFIX_BLOCK_CHARS);
    expect(promptPrefixKey(completion(`${long} one`))).toBe(promptPrefixKey(completion(`${long} two`)));
    expect(promptPrefixKey(completion(`y${long}`))).not.toBe(promptPrefixKey(completion(long)));
    const tokens = Array.from({ length: PREFIX_BLOCK_TOKENS }, (_, i) => i % 200);
    expect(promptPrefixKey(completion([...tokens, 1]))).toBe(promptPrefixKey(completion([...tokens, 2])));
    expect(promptPrefixKey(completion([7, ...tokens]))).not.toBe(promptPrefixKey(completion(tokens)));
  });

  it("has none for prompts shorter than a block, or for embeddings", () => {
    expect(promptPrefixKey(completion("x".repeat(PREFIX_BLOCK_CHARS - 1)))).toBeUndefined();
    expect(promptPrefixKey(completion(Array(PREFIX_BLOCK_TOKENS - 1).fill(3)))).toBeUndefined();
    expect(promptPrefixKey(chat("short", "chat"))).toBeUndefined();
    expect(promptPrefixKey({ ...base, kind: "embedding", inputs: ["x".repeat(5000)] })).toBeUndefined();
  });

  it("follows a conversation as it grows by a turn, whatever the turns after the block", () => {
    const first = promptPrefixKey(chat(SYSTEM, "What burns best?"));
    expect(first).toBeDefined();
    expect(promptPrefixKey(chat(SYSTEM, "What burns best?", "Oak.", "And after oak?"))).toBe(first);
    expect(promptPrefixKey(chat(SYSTEM, "Something else"))).toBe(first);
    // The same text as a completion is another prompt once templated: another key.
    expect(promptPrefixKey(completion(`system\0${SYSTEM}\0`))).not.toBe(first);
  });

  it("keeps apart what computes other cells: another model, adapter or template", () => {
    const prompt = "z".repeat(2 * PREFIX_BLOCK_CHARS);
    const keys = [
      completion(prompt),
      completion(prompt, { ...model, baseModelId: "other" }),
      completion(prompt, { ...model, adapter: { key: "artifacts/lora/a.gguf" } } as typeof model),
      completion(prompt, { ...model, adapter: { key: "artifacts/lora/b.gguf" } } as typeof model),
      completion(prompt, { ...model, chatTemplate: "{{ messages }}" } as typeof model),
    ].map(promptPrefixKey);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("RecentPrefixes", () => {
  it("keeps the last `capacity` distinct keys, a key used again counting as new", () => {
    const recent = new RecentPrefixes(3);
    for (const key of ["a", "b", "c", "a", undefined, "d"]) recent.note(key);
    expect(recent.keys).toEqual(["c", "a", "d"]);
    recent.clear();
    expect(recent.keys).toEqual([]);
  });

  it("keeps none with a capacity of 0 (the prompt cache off)", () => {
    const recent = new RecentPrefixes(0);
    recent.note("a");
    expect(recent.keys).toEqual([]);
  });
});
