import type { StreamEvent } from "../../requests/stream.js";
import { endingChunks } from "./ending-chunks.js";
import { jsonTemplate } from "./json-template.js";
import { chatLogprobs } from "./logprobs.js";
import type { ChatCompletionChunk, UsageBody } from "../contract/openai/responses.js";

export interface ChatMeta {
  id: string;
  created: number;
  model: string;
}

type ChatChunkChoice = ChatCompletionChunk["choices"][number];

/** The one shape of a streamed chat chunk. */
function chatChunk(meta: ChatMeta, choices: ChatChunkChoice[], usage?: UsageBody): ChatCompletionChunk {
  return { ...meta, object: "chat.completion.chunk", choices, ...(usage ? { usage } : {}) };
}

/**
 * A streamed chat completion's chunks, as JSON texts, event by event. The first delta of
 * each choice names the role; a token's chunk is a template stringified once per request.
 * The chunk that ends the last choice carries the usage, and with `include_usage` a
 * usage-only chunk follows. A token event with logprobs (the request asked) is stringified
 * whole, with its tokens' logprobs.
 */
export function chatChunks(meta: ChatMeta, includeUsage: boolean): (event: StreamEvent) => string[] {
  const deltaChunk = (first: boolean) =>
    jsonTemplate<{ index: number; content: string }>((hole) =>
      chatChunk(meta, [
        {
          index: hole("index"),
          delta: first ? { role: "assistant", content: hole("content") } : { content: hole("content") },
          logprobs: null,
          finish_reason: null,
        },
      ]),
    );
  const firstDelta = deltaChunk(true);
  const nextDelta = deltaChunk(false);
  const started = new Set<number>();
  /** A tool call's delta: its first names it, the next ones carry argument fragments. */
  const callDelta = (index: number, delta: NonNullable<ChatChunkChoice["delta"]["tool_calls"]>[number]) => {
    const first = !started.has(index);
    started.add(index);
    const choice: ChatChunkChoice = {
      index,
      delta: first ? { role: "assistant", content: "", tool_calls: [delta] } : { tool_calls: [delta] },
      logprobs: null,
      finish_reason: null,
    };
    return [JSON.stringify(chatChunk(meta, [choice]))];
  };
  return (event) => {
    if (event.type === "token") {
      const first = !started.has(event.index);
      started.add(event.index);
      if (event.logprobs) {
        const delta = first ? { role: "assistant" as const, content: event.text } : { content: event.text };
        const choice = { index: event.index, delta, logprobs: chatLogprobs(event.logprobs), finish_reason: null };
        return [JSON.stringify(chatChunk(meta, [choice]))];
      }
      return [(first ? firstDelta : nextDelta)({ index: event.index, content: event.text })];
    }
    if (event.type === "tool_call") {
      return callDelta(event.index, {
        index: event.call,
        id: event.callId,
        type: "function",
        function: { name: event.name, arguments: "" },
      });
    }
    if (event.type === "tool_arguments") {
      return callDelta(event.index, { index: event.call, function: { arguments: event.text } });
    }
    if (event.type !== "done") return [];
    return endingChunks(
      event,
      includeUsage,
      (choices: ChatChunkChoice[], usage) => chatChunk(meta, choices, usage),
      (index, finishReason) => ({
        index,
        delta: started.has(index) ? {} : { role: "assistant" as const, content: "" },
        logprobs: null,
        finish_reason: finishReason,
      }),
    );
  };
}
