import type { StreamEvent } from "../../requests/stream.js";
import type { PublicFinishReason, UsageBody } from "../contract/openai/responses.js";
import { publicFinishReason, usageBody } from "./collect.js";

type Done = Extract<StreamEvent, { type: "done" }>;

/**
 * The chunks that end a stream, as JSON texts, for either chunk shape: one per choice with
 * its finish reason (the last of them also carries the usage), then, with include_usage, a
 * chunk of the usage alone.
 */
export function endingChunks<Choice>(
  done: Done,
  includeUsage: boolean,
  chunk: (choices: Choice[], usage?: UsageBody) => object,
  ending: (index: number, finishReason: PublicFinishReason) => Choice,
): string[] {
  const usage = usageBody(done.usage);
  const last = done.choices.length - 1;
  const chunks = done.choices.map((choice, i) =>
    chunk([ending(choice.index, publicFinishReason(choice.finishReason))], i === last ? usage : undefined),
  );
  if (includeUsage) chunks.push(chunk([], usage));
  return chunks.map((c) => JSON.stringify(c));
}
