import type { ChatMessage } from "../../domain/generation.js";

/**
 * Hearth's chat template for models whose file carries none (docs/api.md):
 *
 *   System: <content>\n
 *   User: <content>\n
 *   Assistant: <content>\n
 *   Assistant:
 *
 * Generation stops before the model starts a new "User:" or "System:" turn.
 */
const labels: Record<ChatMessage["role"], string> = { system: "System", user: "User", assistant: "Assistant" };

export const defaultChatStops = ["\nUser:", "\nSystem:"] as const;

export function renderDefaultChat(messages: readonly ChatMessage[]): string {
  return `${messages.map((m) => `${labels[m.role]}: ${m.content}\n`).join("")}Assistant:`;
}
