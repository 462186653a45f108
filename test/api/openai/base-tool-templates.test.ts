import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import {
  WITH_TOOLS,
  weather,
  tools,
  user,
  expectValidCalls,
  defaultToolsMessage,
  applyChatTemplate,
} from "../../helpers/tool-templates.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTables } from "../../../src/models/factory/demo-models.js";
import { writeTinyLlama } from "../../../src/models/factory/tiny-llama.js";
import { gguf } from "../../../src/models/formats/gguf-types.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";

/** hearth-tiny's weights with a chat template of its own that knows only roles and contents. */
const MODEL_ID = "plain-template-tiny";
const MODEL = `accounts/hearth/models/${MODEL_ID}`;
const PLAIN =
  "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}" +
  "{% if add_generation_prompt %}<|assistant|>{% endif %}";

/** hearth-tiny's weights with a template that writes tools, calls and results itself, in tags of its own. */
const TOOLS_MODEL_ID = "tool-template-tiny";
const TOOLS_MODEL = `accounts/hearth/models/${TOOLS_MODEL_ID}`;
// Tool calls on a base model (a GGUF in HEARTH_MODEL_DIR) whose own chat template does not write
// tools (issue 27): Hearth's default tool format goes through the template, as for an adapter's
// template of that kind, not node-llama-cpp's fallback ("||call: name(...)").
describe("tool calls on a base model's own chat template", () => {
  let modelDir: string;
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    modelDir = await mkdtemp(path.join(os.tmpdir(), "hearth-plain-template-"));
    await writeTinyLlama(path.join(modelDir, `${MODEL_ID}.gguf`), {
      table: demoTables().base,
      name: MODEL_ID,
      extraMetadata: { "tokenizer.chat_template": gguf.str(PLAIN) },
    });
    await writeTinyLlama(path.join(modelDir, `${TOOLS_MODEL_ID}.gguf`), {
      table: demoTables().base,
      name: TOOLS_MODEL_ID,
      extraMetadata: { "tokenizer.chat_template": gguf.str(WITH_TOOLS) },
    });
    // The oracle's first use takes seconds of this thread, which also serves Hearth: not between requests.
    greedyText("", 1);
    hearth = await startTestHearth({ env: { HEARTH_MODEL_DIR: modelDir, HEARTH_CONTEXT_SIZE: "2048" } });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
    if (modelDir) await rm(modelDir, { recursive: true, force: true });
  });

  const firstPrompt = (offered: ChatCompletionTool[]) =>
    `<|system|>${defaultToolsMessage(offered)}\n<|user|>What is the weather in Paris?\n<|assistant|>`;

  it("with required, gives valid calls, the tools offered in Hearth's default format", async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: user,
        tools,
        tool_choice: "required",
        parallel_tool_calls: false,
        temperature: 1,
        seed,
        max_tokens: 200,
      });
      expectValidCalls(r.choices[0]!);
      expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(firstPrompt(tools)));
    }
  });

  it("with a named function and no parallel calls, calls that one once", async () => {
    for (const seed of [4, 5]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: user,
        tools,
        tool_choice: { type: "function", function: { name: "search" } },
        parallel_tool_calls: false,
        temperature: 1,
        seed,
        max_tokens: 200,
      });
      expect(expectValidCalls(r.choices[0]!, "search")).toHaveLength(1);
      expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(firstPrompt(tools)));
    }
  });

  it("renders a call and its result in the history in the default format, through the template", async () => {
    const first = await client.chat.completions.create({
      model: MODEL,
      messages: user,
      tools: [weather],
      tool_choice: "required",
      parallel_tool_calls: false,
      temperature: 0,
      max_tokens: 200,
    });
    const [call] = expectValidCalls(first.choices[0]!, "get_weather");
    const result = '{"temperature": 21, "sky": "clear"}';
    const history: ChatCompletionMessageParam[] = [
      ...user,
      first.choices[0]!.message,
      { role: "tool", tool_call_id: call!.id, content: result },
    ];
    const turns =
      "<|user|>What is the weather in Paris?\n" +
      `<|assistant|><tool_call>{"name": "get_weather", "arguments": ${call!.function.arguments}}</tool_call>\n` +
      `<|user|>Tool: ${result}\n<|assistant|>`;
    const withTools = `<|system|>${defaultToolsMessage([weather])}\n${turns}`;
    const ask = (toolChoice: "auto" | "none") =>
      client.chat.completions.create({
        model: MODEL,
        messages: history,
        tools: [weather],
        tool_choice: toolChoice,
        temperature: 0,
        max_tokens: 8,
      });
    const answer = await ask("auto");
    const none = await ask("none");
    expect(answer.usage!.prompt_tokens).toBe(Buffer.byteLength(withTools));
    // Greedy, the model answers in text here: what its bigram says after the prompt's last byte.
    expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
    expect(answer.choices[0]!.message.content).toBe(greedyText(withTools, 8));
    expect(answer.choices[0]!.finish_reason).toBe("length");
    // Without tools offered (none), the history is written the same way, without the tools message.
    expect(none.usage!.prompt_tokens).toBe(Buffer.byteLength(turns));
    expect(none.choices[0]!.message.content).toBe(greedyText(turns, 8));
  });

  it("gives a Jinja template that writes tools the tools, and each tool message's content as sent", async () => {
    const first = await client.chat.completions.create({
      model: TOOLS_MODEL,
      messages: user,
      tools: [weather],
      tool_choice: "required",
      parallel_tool_calls: false,
      temperature: 0,
      max_tokens: 200,
    });
    const [call] = expectValidCalls(first.choices[0]!, "get_weather");
    expect(first.usage!.prompt_tokens).toBe(Buffer.byteLength(applyChatTemplate(WITH_TOOLS, user, [weather])));
    const history: ChatCompletionMessageParam[] = [
      ...user,
      first.choices[0]!.message,
      { role: "tool", tool_call_id: call!.id, content: '[21, "clear"]' },
    ];
    const prompt = applyChatTemplate(WITH_TOOLS, history, [weather]);
    expect(prompt).toContain('</call><result>[21, "clear"]</result><assistant>');
    const answer = await client.chat.completions.create({
      model: TOOLS_MODEL,
      messages: history,
      tools: [weather],
      temperature: 0,
      max_tokens: 8,
    });
    expect(answer.usage!.prompt_tokens).toBe(Buffer.byteLength(prompt));
    expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
    expect(answer.choices[0]!.message.content).toBe(greedyText(prompt, 8));
  });
});
