import type { ChatMessage, ToolCall, ToolFunction } from "../domain/generation.js";
import type { ToolCallFormat } from "./template-protocol.js";

/**
 * Hearth's default tool format (docs/api.md, Tool calls), for a prompt whose template does not
 * write tools itself: Hearth's default template, and a user's template in which node-llama-cpp
 * finds no way of writing calls. The tools are described in a system message after the leading
 * system messages, and an assistant's calls are written after its content:
 *
 *   <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>
 */
export const defaultToolCallFormat: ToolCallFormat = {
  trigger: "<tool_call>",
  prefix: '<tool_call>{"name": "',
  paramsPrefix: '", "arguments": ',
  suffix: "}</tool_call>",
  between: "",
};

/** How a tool message's content starts, written as a turn of its own or in a user message. */
export const toolResultLabel = "Tool: ";

const callText = (call: ToolCall) =>
  `${defaultToolCallFormat.prefix}${call.name}${defaultToolCallFormat.paramsPrefix}${call.arguments}${defaultToolCallFormat.suffix}`;

/** The system message that offers the tools: a sentence, each tool as OpenAI's JSON on its line, how to call one. */
function toolsMessage(tools: readonly ToolFunction[]): ChatMessage {
  const lines = tools.map((t) => JSON.stringify({ type: "function", function: t }));
  const call = `${defaultToolCallFormat.prefix}<name>${defaultToolCallFormat.paramsPrefix}<arguments as a JSON object>${defaultToolCallFormat.suffix}`;
  return {
    role: "system",
    content:
      "You may call these functions, each described by a JSON object on its line:\n" +
      `${lines.join("\n")}\nTo call one, answer ${call}`,
  };
}

/**
 * The messages with the default tool format written into them: the tools message (when tools
 * are offered) after the leading system messages, each assistant's calls appended to its
 * content as text. Tool messages are left for the template to write.
 */
export function withDefaultToolFormat(
  messages: readonly ChatMessage[],
  tools: readonly ToolFunction[] | undefined,
): ChatMessage[] {
  const written = messages.map((m): ChatMessage => {
    if (m.role !== "assistant" || !m.toolCalls?.length) return m;
    return { role: "assistant", content: m.content + m.toolCalls.map(callText).join("") };
  });
  if (tools && tools.length > 0) {
    const systemCount = messages.findIndex((m) => m.role !== "system");
    written.splice(systemCount === -1 ? written.length : systemCount, 0, toolsMessage(tools));
  }
  return written;
}

/**
 * For a template of system, user and assistant messages only: the default tool format written in,
 * and each tool message a user message, `Tool: <content>`.
 */
export function inDefaultToolFormat(
  messages: readonly ChatMessage[],
  tools: readonly ToolFunction[] | undefined,
): ChatMessage[] {
  return withDefaultToolFormat(messages, tools).map((m) =>
    m.role === "tool" ? { role: "user", content: `${toolResultLabel}${m.content}` } : m,
  );
}
