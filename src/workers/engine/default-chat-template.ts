import type { ChatMessage, ToolFunction } from "../../domain/generation.js";
import { toolResultLabel, withDefaultToolFormat } from "../../templates/default-tool-format.js";

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
 * Tools and calls are written in Hearth's default tool format (templates/default-tool-format.ts).
 * Generation stops before the model starts a new "User:", "System:" or "Tool:" turn.
 */
const labels: Record<ChatMessage["role"], string> = {
  system: "System: ",
  user: "User: ",
  assistant: "Assistant: ",
  tool: toolResultLabel,
};

export const defaultChatStops = ["\nUser:", "\nSystem:", "\nTool:"] as const;

export function renderDefaultChat(messages: readonly ChatMessage[], tools?: readonly ToolFunction[]): string {
  const turns = withDefaultToolFormat(messages, tools).map((m) => `${labels[m.role]}${m.content}\n`);
  return `${turns.join("")}Assistant:`;
}
