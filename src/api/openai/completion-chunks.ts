import type { StreamEvent } from "../../requests/stream.js";
import { endingChunks } from "./ending-chunks.js";
import { jsonTemplate } from "./json-template.js";
import { completionLogprobs } from "./logprobs.js";
import type { CompletionChunk, UsageBody } from "../contract/openai/responses.js";

export interface CompletionMeta {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
}

type CompletionChoice = CompletionChunk["choices"][number];

/** The one shape of a streamed completion chunk. */
function completionChunk(meta: CompletionMeta, choices: CompletionChoice[], usage?: UsageBody): CompletionChunk {
  return { ...meta, choices, ...(usage ? { usage } : {}) };
}

/**
 * A streamed completion's chunks, as JSON texts, event by event. A token's chunk is a
 * template stringified once per request; the chunk that ends the last choice carries
 * the usage, and with `include_usage` a usage-only chunk follows. A token event with logprobs
 * (the request asked) is stringified whole, with its tokens' logprobs in the legacy shape.
 */
export function completionChunks(meta: CompletionMeta, includeUsage: boolean): (event: StreamEvent) => string[] {
  const tokenChunk = jsonTemplate<{ text: string; index: number }>((hole) =>
    completionChunk(meta, [{ text: hole("text"), index: hole("index"), logprobs: null, finish_reason: null }]),
  );
  return (event) => {
    if (event.type === "token") {
      if (!event.logprobs) return [tokenChunk({ text: event.text, index: event.index })];
      const choice = {
        text: event.text,
        index: event.index,
        logprobs: completionLogprobs(event.logprobs),
        finish_reason: null,
      };
      return [JSON.stringify(completionChunk(meta, [choice]))];
    }
    if (event.type !== "done") return [];
    return endingChunks(
      event,
      includeUsage,
      (choices: CompletionChoice[], usage) => completionChunk(meta, choices, usage),
      (index, finishReason) => ({ text: "", index, logprobs: null, finish_reason: finishReason }),
    );
  };
}
