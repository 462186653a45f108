import path from "node:path";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
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
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { defaultAccount, type Management } from "../../helpers/management.js";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir } from "../../helpers/test-models.js";

const GGUF_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");

/** A template that knows only roles and contents: tools come in Hearth's default format. */
const PLAIN =
  "{% for message in messages %}<{{ message.role }}>{{ message.content }}{% endfor %}" +
  "{% if add_generation_prompt %}<assistant>{% endif %}";

// Tool calls on an adapter whose own chat template was set by its owner (issue 27): with a template
// that does not write tools, Hearth's default format goes through it; with one that does, the
// template writes them and its call format is the one parsed.
describe("tool calls with an adapter's own chat template", () => {
  let hearth: TestHearth;
  let me: Management;
  let client: OpenAI;
  const models: Record<"plain" | "withTools", string> = { plain: "", withTools: "" };

  beforeAll(async () => {
    // The oracle's first use takes seconds of this thread, which also serves Hearth: not between requests.
    greedyText("", 1, { adapter: true });
    // The templates' save-time probes (2,049 messages) get time to spare on a loaded machine:
    // their bound is not what is tested here.
    hearth = await startTestHearth({ env: { HEARTH_CONTEXT_SIZE: "2048", HEARTH_TEMPLATE_TIMEOUT_MS: "10000" } });
    me = defaultAccount(hearth);
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
    for (const [key, id, template] of [
      ["plain", "plain-chat", PLAIN],
      ["withTools", "tool-chat", WITH_TOOLS],
    ] as const) {
      models[key] = await me.deployFolder(id, GGUF_EXAMPLE);
      const patched = await me.call("PATCH", `/v1/accounts/default/models/${id}`, {
        conversationConfig: { template },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    }
  });
  afterAll(async () => {
    await hearth?.close();
  });

  describe("a template that does not write tools", () => {
    const firstPrompt = () => `<system>${defaultToolsMessage(tools)}<user>What is the weather in Paris?<assistant>`;

    it("with required, gives valid calls, the tools offered in Hearth's default format", async () => {
      for (const seed of [1, 2, 3]) {
        const r = await client.chat.completions.create({
          model: models.plain,
          messages: user,
          tools,
          tool_choice: "required",
          parallel_tool_calls: false,
          temperature: 1,
          seed,
          max_tokens: 200,
        });
        expectValidCalls(r.choices[0]!);
        expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(firstPrompt()));
      }
    });

    it("with a named function and no parallel calls, calls that one once", async () => {
      for (const seed of [4, 5]) {
        const r = await client.chat.completions.create({
          model: models.plain,
          messages: user,
          tools,
          tool_choice: { type: "function", function: { name: "search" } },
          parallel_tool_calls: false,
          temperature: 1,
          seed,
          max_tokens: 200,
        });
        expect(expectValidCalls(r.choices[0]!, "search")).toHaveLength(1);
        expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(firstPrompt()));
      }
    });

    it("renders a call and its result in the history in the default format, through the template", async () => {
      const first = await client.chat.completions.create({
        model: models.plain,
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
        "<user>What is the weather in Paris?" +
        `<assistant><tool_call>{"name": "get_weather", "arguments": ${call!.function.arguments}}</tool_call>` +
        `<user>Tool: ${result}<assistant>`;
      const withTools = `<system>${defaultToolsMessage([weather])}${turns}`;
      const ask = (toolChoice: "auto" | "none") =>
        client.chat.completions.create({
          model: models.plain,
          messages: history,
          tools: [weather],
          tool_choice: toolChoice,
          temperature: 0,
          max_tokens: 8,
        });
      const answer = await ask("auto");
      const none = await ask("none");
      expect(answer.usage!.prompt_tokens).toBe(Buffer.byteLength(withTools));
      // Greedy, the adapter answers in text here: what its bigram says after the prompt's last byte.
      expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
      expect(answer.choices[0]!.message.content).toBe(greedyText(withTools, 8, { adapter: true }));
      expect(answer.choices[0]!.finish_reason).toBe("length");
      // Without tools offered (none), the history is written the same way, without the tools message.
      expect(none.usage!.prompt_tokens).toBe(Buffer.byteLength(turns));
      expect(none.choices[0]!.message.content).toBe(greedyText(turns, 8, { adapter: true }));
    });
  });

  describe("a template that writes tools itself", () => {
    it("with required, is given the tools and its calls are parsed in its own format", async () => {
      for (const seed of [1, 2, 3]) {
        const r = await client.chat.completions.create({
          model: models.withTools,
          messages: user,
          tools,
          tool_choice: "required",
          parallel_tool_calls: false,
          temperature: 1,
          seed,
          max_tokens: 200,
        });
        expectValidCalls(r.choices[0]!);
        expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(applyChatTemplate(WITH_TOOLS, user, tools)));
      }
    });

    it("with a named function and no parallel calls, calls that one once", async () => {
      const r = await client.chat.completions.create({
        model: models.withTools,
        messages: user,
        tools,
        tool_choice: { type: "function", function: { name: "get_weather" } },
        parallel_tool_calls: false,
        temperature: 1,
        seed: 9,
        max_tokens: 200,
      });
      expect(expectValidCalls(r.choices[0]!, "get_weather")).toHaveLength(1);
      expect(r.usage!.prompt_tokens).toBe(Buffer.byteLength(applyChatTemplate(WITH_TOOLS, user, tools)));
    });

    it("writes a call and its result in the history as the template says", async () => {
      const first = await client.chat.completions.create({
        model: models.withTools,
        messages: user,
        tools: [weather],
        tool_choice: "required",
        parallel_tool_calls: false,
        temperature: 0,
        max_tokens: 200,
      });
      const [call] = expectValidCalls(first.choices[0]!, "get_weather");
      const history: ChatCompletionMessageParam[] = [
        ...user,
        first.choices[0]!.message,
        { role: "tool", tool_call_id: call!.id, content: '[21, "clear"]' },
      ];
      // The template is given the tool message's content as sent, JSON or not.
      const prompt = applyChatTemplate(WITH_TOOLS, history, [weather]);
      expect(prompt).toContain('<assistant><call>{"name": "get_weather", "arguments": {');
      expect(prompt).toContain('</call><result>[21, "clear"]</result><assistant>');
      const answer = await client.chat.completions.create({
        model: models.withTools,
        messages: history,
        tools: [weather],
        temperature: 0,
        max_tokens: 8,
      });
      expect(answer.usage!.prompt_tokens).toBe(Buffer.byteLength(prompt));
      expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
      expect(answer.choices[0]!.message.content).toBe(greedyText(prompt, 8, { adapter: true }));
    });
  });
});
