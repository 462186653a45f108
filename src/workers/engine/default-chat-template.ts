import type { ChatMessage, ToolCall, ToolFunction } from "../../domain/generation.js";
import type { ToolCallFormat } from "../../templates/template-protocol.js";

/**
 * Hearth's chat template for models whose file carries none (docs/api.md):
 *
 *   System: <content>\n
 *   System: You may call these functions, … (when tools are offered)\n
 *   User: <content>\n
 *   Assistant: <content><tool_call>{"name": "f", "arguments": {…}}</tool_call>\n
 *   Tool: <a call's result>\n
 *   Assistant:
 *
 * Offered tools come in one more system turn after the system messages: a sentence, each tool
 * as OpenAI's JSON on its own line, and how to call one. Generation stops before the model starts a new
 * "User:", "System:" or "Tool:" turn.
 */
const labels: Record<ChatMessage["role"], string> = {
  system: "System",
  user: "User",
  assistant: "Assistant",
  tool: "Tool",
};

export const defaultChatStops = ["\nUser:", "\nSystem:", "\nTool:"] as const;

export const defaultToolCallFormat: ToolCallFormat = {
  trigger: "<tool_call>",
  prefix: '<tool_call>{"name": "',
  paramsPrefix: '", "arguments": ',
  suffix: "}</tool_call>",
  between: "",
};

const callText = (call: ToolCall) =>
  `${defaultToolCallFormat.prefix}${call.name}${defaultToolCallFormat.paramsPrefix}${call.arguments}${defaultToolCallFormat.suffix}`;

function toolsTurn(tools: readonly ToolFunction[]): string {
  const lines = tools.map((t) => JSON.stringify({ type: "function", function: t }));
  return (
    `${labels.system}: You may call these functions, each described by a JSON object on its line:\n` +
    `${lines.join("\n")}\n` +
    `To call one, answer ${defaultToolCallFormat.prefix}<name>${defaultToolCallFormat.paramsPrefix}<arguments as a JSON object>${defaultToolCallFormat.suffix}\n`
  );
}

export function renderDefaultChat(messages: readonly ChatMessage[], tools?: readonly ToolFunction[]): string {
  const systemCount = messages.findIndex((m) => m.role !== "system");
  const turns = messages.map((m) => {
    const calls = m.role === "assistant" ? (m.toolCalls ?? []).map(callText).join("") : "";
    return `${labels[m.role]}: ${m.content}${calls}\n`;
  });
  if (tools && tools.length > 0) turns.splice(systemCount === -1 ? turns.length : systemCount, 0, toolsTurn(tools));
  return `${turns.join("")}Assistant:`;
}
