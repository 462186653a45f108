import type { StreamEvent } from "../../queues/stream.js";
import { publicFinishReason, usageBody } from "./collect.js";
import { jsonTemplate } from "./json-template.js";
import type { UsageBody } from "../contract/openai/responses.js";

export interface CompletionMeta {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
}

interface CompletionChoice {
  text: string;
  index: number;
  logprobs: null;
  finish_reason: "stop" | "length" | null;
}

/** The one shape of a streamed completion chunk. */
function completionChunk(meta: CompletionMeta, choices: CompletionChoice[], usage?: UsageBody) {
  return { ...meta, choices, ...(usage ? { usage } : {}) };
}

/**
 * A streamed completion's chunks, as JSON texts, event by event. A token's chunk is a
 * template stringified once per request; the chunk that ends the last choice carries
 * the usage, and with `include_usage` a usage-only chunk follows.
 */
export function completionChunks(meta: CompletionMeta, includeUsage: boolean): (event: StreamEvent) => string[] {
  const tokenChunk = jsonTemplate<{ text: string; index: number }>((hole) =>
    completionChunk(meta, [{ text: hole("text"), index: hole("index"), logprobs: null, finish_reason: null }]),
  );
  return (event) => {
    if (event.type === "token") return [tokenChunk({ text: event.text, index: event.index })];
    if (event.type !== "done") return [];
    const usage = usageBody(event.usage);
    const last = event.choices.length - 1;
    const chunks = event.choices.map((choice, i) =>
      completionChunk(
        meta,
        [{ text: "", index: choice.index, logprobs: null, finish_reason: publicFinishReason(choice.finishReason) }],
        i === last ? usage : undefined,
      ),
    );
    if (includeUsage) chunks.push(completionChunk(meta, [], usage));
    return chunks.map((chunk) => JSON.stringify(chunk));
  };
}
