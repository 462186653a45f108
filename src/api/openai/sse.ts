import type { SequencedEvent, StreamEvent } from "../../requests/stream.js";
import { eventStream, sseFrame } from "../event-stream.js";
import { REQUEST_ID_HEADER } from "../request-id.js";

export interface SseOptions {
  /** The request's ID, sent in the `x-request-id` header: what a client resumes the stream with. */
  requestId: string;
  /** A resumed stream's `Last-Event-ID`: the events up to it are rendered (their chunks may depend on them) but not sent. */
  after?: number;
}

/**
 * Renders server-sent events: `data: {json}` per chunk and a final `data: [DONE]`. The last
 * chunk of each worker event carries the event's `seq` as its SSE `id:`, so a client that
 * lost the connection resumes after it (openai/streams.ts). `toChunks` gives each event's
 * chunks already as JSON texts (see completion-chunks.ts: a token's is a template filled in,
 * not a whole object stringified). The response is only created once the first event is in,
 * so an error that happens before any token still gets its proper HTTP status.
 */
export async function sseResponse(
  events: AsyncGenerator<SequencedEvent, void, undefined>,
  toChunks: (event: StreamEvent) => string[],
  onCancel: () => void,
  options: SseOptions,
): Promise<Response> {
  const after = options.after ?? 0;
  // One write per event: a token's single chunk, or a `done`'s chunks together.
  const frames = (event: SequencedEvent) => {
    const jsons = toChunks(event);
    if (event.seq !== undefined && event.seq <= after) return "";
    return jsons.map((json, i) => sseFrame(json, i === jsons.length - 1 ? { id: event.seq } : {})).join("");
  };
  const response = await eventStream(events, {
    frames,
    error: { fallback: "The stream failed." },
    end: sseFrame("[DONE]"),
    onCancel,
  });
  response.headers.set(REQUEST_ID_HEADER, options.requestId);
  return response;
}
