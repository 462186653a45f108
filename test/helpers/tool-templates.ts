import { Template } from "@huggingface/jinja";
import { Ajv } from "ajv";
import type OpenAI from "openai";
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { expect } from "vitest";

/**
 * What the tool-call tests of a model's own chat template share (adapter-tool-templates.test.ts,
 * base-tool-templates.test.ts): a template that writes tools itself, two tools, the checks of
 * the calls that come back, and the prompts the templates are expected to render.
 */

/** A template that writes tools, calls and results itself, in tags of its own. */
export const WITH_TOOLS =
  "{%- if tools %}<tools>{% for t in tools %}{{ t | tojson }}\n{% endfor %}</tools>{% endif %}" +
  "{%- for message in messages %}" +
  '{%- if message.role == "tool" %}<result>{{ message.content }}</result>' +
  '{%- elif message.role == "assistant" and message.tool_calls %}<assistant>{{ message.content or "" }}' +
  '{%- for c in message.tool_calls %}<call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</call>{% endfor %}' +
  "{%- else %}<{{ message.role }}>{{ message.content }}{% endif %}" +
  "{%- endfor %}" +
  "{%- if add_generation_prompt %}<assistant>{% endif %}";

// hearth-tiny reads bytes, and its example adapter is a bigram model: the grammar makes its calls,
// so their strings are bounded to end within max_tokens, and one call is asked for (with parallel
// calls, a bigram model seldom prefers its end of text to another call).
export const weather: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 12 }, unit: { enum: ["celsius", "fahrenheit"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
  },
};
export const search: ChatCompletionTool = {
  type: "function",
  function: {
    name: "search",
    description: "Searches the web",
    parameters: {
      type: "object",
      properties: { query: { type: "string", maxLength: 16 }, exact: { type: "boolean" } },
      required: ["query", "exact"],
      additionalProperties: false,
    },
  },
};
export const tools = [weather, search];
export const validators = new Map(
  tools.map((t) => [t.function.name, new Ajv({ strict: false }).compile(t.function.parameters ?? {})] as const),
);
export const user: ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];

export type FunctionCall = ChatCompletionMessageToolCall & { type: "function" };

export function expectValidCalls(choice: OpenAI.Chat.Completions.ChatCompletion.Choice, only?: string): FunctionCall[] {
  expect(choice.finish_reason, JSON.stringify(choice.message)).toBe("tool_calls");
  expect(choice.message.content).toBeNull();
  const calls = (choice.message.tool_calls ?? []) as FunctionCall[];
  expect(calls.length).toBeGreaterThanOrEqual(1);
  for (const call of calls) {
    expect(call.type).toBe("function");
    expect(call.id).toMatch(/^call_/);
    if (only) expect(call.function.name).toBe(only);
    const validate = validators.get(call.function.name);
    expect(validate, call.function.name).toBeDefined();
    expect(validate!(JSON.parse(call.function.arguments)), call.function.arguments).toBe(true);
  }
  return calls;
}

/** Hearth's default tool format (docs/api.md, Tool calls) as the system message a template is given. */
export const defaultToolsMessage = (offered: ChatCompletionTool[]) =>
  "You may call these functions, each described by a JSON object on its line:\n" +
  offered.map((t) => JSON.stringify(t)).join("\n") +
  '\nTo call one, answer <tool_call>{"name": "<name>", "arguments": <arguments as a JSON object>}</tool_call>';

/** What `template` writes for OpenAI messages, as transformers' apply_chat_template would (arguments parsed). */
export function applyChatTemplate(
  template: string,
  messages: ChatCompletionMessageParam[],
  offered?: ChatCompletionTool[],
) {
  const parsed = messages.map((m) =>
    m.role === "assistant" && m.tool_calls
      ? {
          ...m,
          tool_calls: (m.tool_calls as FunctionCall[]).map((c) => ({
            ...c,
            function: { ...c.function, arguments: JSON.parse(c.function.arguments) },
          })),
        }
      : m,
  );
  return new Template(template).render({ messages: parsed, add_generation_prompt: true, tools: offered });
}
