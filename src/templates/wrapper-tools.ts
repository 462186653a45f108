import {
  ChatWrapper,
  JinjaTemplateChatWrapper,
  LlamaText,
  type ChatWrapperGenerateContextStateOptions,
} from "node-llama-cpp";
import type { ChatMessage, ToolFunction } from "../domain/generation.js";
import { toChatFunctions, toChatHistory, toolCallFormatOf } from "./chat-history.js";
import { defaultToolCallFormat, inDefaultToolFormat } from "./default-tool-format.js";
import type { ToolCallFormat } from "./template-protocol.js";

/**
 * How tools and tool calls go through a chat template that node-llama-cpp renders, a base
 * model's own (llama-model.ts) or an adapter's (template-thread.ts), by the one rule of
 * docs/api.md (Tool calls): the template's own tool format when node-llama-cpp knows how the
 * template writes calls, else Hearth's default tool format written into the messages.
 */

/**
 * node-llama-cpp's own call syntax, `||call: name({...})`: what a chat wrapper writes calls in
 * when it knows no format for its template (a Jinja template in which it finds none, and the
 * wrappers of templates that have none: ChatML, Llama 2, Llama 3, Gemma, Alpaca...).
 */
const genericCallPrefix = LlamaText(ChatWrapper.defaultSettings.functions.call.prefix).toString().trim();

/** Whether the wrapper writes calls in its template's format (found in a Jinja template, or its model family's). */
export function writesTemplateCalls(wrapper: ChatWrapper): boolean {
  return !LlamaText(wrapper.settings.functions.call.prefix).toString().trimStart().startsWith(genericCallPrefix);
}

/**
 * What the wrapper renders the chat from, and the format the model's calls are then read in. A
 * Jinja template that writes calls is given each tool message's content as sent, as
 * apply_chat_template would; node-llama-cpp's own wrappers (Qwen's...) a JSON result parsed, as
 * they write it back as JSON (chat-history.ts).
 */
export function chatForWrapper(
  wrapper: ChatWrapper,
  messages: readonly ChatMessage[],
  tools: readonly ToolFunction[] | undefined,
): { chat: ChatWrapperGenerateContextStateOptions; toolCallFormat: ToolCallFormat } {
  if (!writesTemplateCalls(wrapper)) {
    return {
      chat: { chatHistory: toChatHistory(inDefaultToolFormat(messages, tools)) },
      toolCallFormat: defaultToolCallFormat,
    };
  }
  return {
    chat: {
      chatHistory: toChatHistory(messages, wrapper instanceof JinjaTemplateChatWrapper ? "as sent" : "parsed"),
      ...(tools && tools.length > 0 ? { availableFunctions: toChatFunctions(tools) } : {}),
    },
    toolCallFormat: toolCallFormatOf(wrapper),
  };
}
