import { z } from "zod";
import type { StreamEvent } from "../../requests/stream.js";
import { chatChunks } from "./chat-chunks.js";
import { completionChunks } from "./completion-chunks.js";

/**
 * What a resumed stream needs to be rendered exactly as its first response was: which
 * endpoint's chunks, their fixed fields and whether usage follows. It is kept with the
 * request's events in Redis (requests/inference-client.ts), and read back from there.
 */
export const streamViewSchema = z.discriminatedUnion("endpoint", [
  z.object({
    endpoint: z.literal("chat"),
    chunk: z.object({ id: z.string(), created: z.number(), model: z.string() }),
    includeUsage: z.boolean(),
  }),
  z.object({
    endpoint: z.literal("completion"),
    chunk: z.object({ id: z.string(), object: z.literal("text_completion"), created: z.number(), model: z.string() }),
    includeUsage: z.boolean(),
  }),
]);
export type StreamView = z.infer<typeof streamViewSchema>;

/** The chunk renderer of a view. */
export function chunksOf(view: StreamView): (event: StreamEvent) => string[] {
  return view.endpoint === "chat"
    ? chatChunks(view.chunk, view.includeUsage)
    : completionChunks(view.chunk, view.includeUsage);
}
