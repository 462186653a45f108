import type { StreamEvent } from "../../queues/stream.js";
import { AppError } from "../../errors.js";
import { eventStreamResponse } from "../event-stream.js";

/**
 * Renders server-sent events: `data: {json}` per chunk and a final `data: [DONE]`.
 * `toChunks` gives each event's chunks already as JSON texts (see completion-chunks.ts:
 * a token's is a template filled in, not a whole object stringified). The response is
 * only created once the first event is in, so an error that happens before any token
 * still gets its proper HTTP status.
 */
export async function sseResponse(
  events: AsyncGenerator<StreamEvent, void, undefined>,
  toChunks: (event: StreamEvent) => string[],
  onCancel: () => void,
): Promise<Response> {
  const first = await events.next(); // throws AppError before anything is sent
  // One write per event: a token's single chunk, or a `done`'s chunks together.
  const frames = (jsons: string[]) =>
    jsons.length === 1 ? `data: ${jsons[0]}\n\n` : jsons.map((json) => `data: ${json}\n\n`).join("");
  return eventStreamResponse(
    async (send) => {
      try {
        if (!first.done) send(frames(toChunks(first.value)));
        for await (const event of events) send(frames(toChunks(event)));
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError("internal", "The stream failed.");
        send(frames([JSON.stringify(appError.toBody())]));
      }
      send("data: [DONE]\n\n");
    },
    () => {
      onCancel();
      void events.return(undefined);
    },
  );
}
