import type { ChatHistoryItem } from "node-llama-cpp";
import type { TemplateTurn } from "./template-protocol.js";

/**
 * Chat messages as node-llama-cpp's chat wrappers take them, ending with the model's turn to
 * answer: what the sandbox renders users' templates with and the engine renders base models' with.
 */
export function toChatHistory(messages: readonly TemplateTurn[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) =>
    m.role === "system"
      ? { type: "system", text: m.content }
      : m.role === "user"
        ? { type: "user", text: m.content }
        : { type: "model", response: [m.content] },
  );
  history.push({ type: "model", response: [] });
  return history;
}
