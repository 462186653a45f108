import {
  LlamaText,
  SpecialTokensText,
  type ChatHistoryItem,
  type ChatModelFunctionCall,
  type ChatModelFunctions,
  type ChatModelResponse,
  type ChatWrapper,
  type GbnfJsonSchema,
} from "node-llama-cpp";
import type { ToolFunction } from "../domain/generation.js";
import { AppError } from "../errors.js";
import type { TemplateTurn, ToolCallFormat } from "./template-protocol.js";

/**
 * Chat messages as node-llama-cpp's chat wrappers take them, ending with the model's turn to
 * answer: what the sandbox renders users' templates with and the engine renders base models' with.
 *
 * node-llama-cpp keeps a tool call and its result together in the model's turn, which goes on
 * after the results; OpenAI's messages put the results in `tool` messages after the assistant's.
 * So each tool message's content becomes the result of the call it names, and an assistant
 * message after tool results continues the same turn. A history that ends with tool results
 * leaves that turn open: the model answers in it.
 *
 * For node-llama-cpp's own wrappers, a result is the content parsed when it is JSON (they write
 * it back as JSON). With `contents: "as sent"`, for a user's Jinja template, a result is the
 * content as sent and an assistant's empty content is kept: the template is given a string
 * `content` in both, as transformers' apply_chat_template would give it.
 */
export function toChatHistory(
  messages: readonly TemplateTurn[],
  contents: "parsed" | "as sent" = "parsed",
): ChatHistoryItem[] {
  const asSent = contents === "as sent";
  const history: ChatHistoryItem[] = [];
  const calls = new Map<string, ChatModelFunctionCall>();
  let open: ChatModelResponse | undefined;
  for (const m of messages) {
    if (m.role === "tool") {
      const call = calls.get(m.toolCallId);
      if (!call) {
        throw new AppError("invalid_request", `No assistant tool call has the id ${m.toolCallId}.`, {
          param: "messages",
        });
      }
      call.result = asSent ? m.content : argumentsOf(m.content);
      continue;
    }
    const continuing = m.role === "assistant" && open !== undefined && lastIsAnsweredCall(open);
    if (!continuing) open = undefined;
    if (m.role === "system") history.push({ type: "system", text: m.content });
    else if (m.role === "user") history.push({ type: "user", text: m.content });
    else {
      if (!open) {
        open = { type: "model", response: [] };
        history.push(open);
      }
      if (m.content.length > 0 || asSent) open.response.push(m.content);
      for (const call of m.toolCalls ?? []) {
        const item: ChatModelFunctionCall = {
          type: "functionCall",
          name: call.name,
          params: argumentsOf(call.arguments),
          result: undefined,
        };
        calls.set(call.id, item);
        open.response.push(item);
      }
    }
  }
  const last = history.at(-1);
  if (!(last?.type === "model" && lastIsAnsweredCall(last))) history.push({ type: "model", response: [] });
  return history;
}

function lastIsAnsweredCall(item: ChatModelResponse): boolean {
  const last = item.response.at(-1);
  return typeof last === "object" && last.type === "functionCall";
}

/** A call's arguments or result as the wrappers render them: parsed JSON, else the text (rendered quoted). */
function argumentsOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Tools as node-llama-cpp's chat wrappers document them to the model. */
export function toChatFunctions(tools: readonly ToolFunction[]): ChatModelFunctions {
  return Object.fromEntries(
    tools.map((t) => [t.name, { description: t.description, params: t.parameters as GbnfJsonSchema | undefined }]),
  );
}

/** How a chat wrapper writes tool calls, in plain text (special-token pieces as written). */
export function toolCallFormatOf(wrapper: ChatWrapper): ToolCallFormat {
  const { call, parallelism } = wrapper.settings.functions;
  const prefix = LlamaText(call.prefix);
  const first = prefix.values.find((v) => v !== "");
  return {
    trigger: first instanceof SpecialTokensText && prefix.values.length > 1 ? first.value : prefix.toString(),
    prefix: prefix.toString(),
    paramsPrefix: LlamaText(call.paramsPrefix).toString(),
    suffix: LlamaText(call.suffix).toString(),
    between: LlamaText(parallelism?.call.betweenCalls ?? "\n").toString(),
  };
}
