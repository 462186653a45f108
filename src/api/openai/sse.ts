import type { StreamEvent } from "../../queues/stream.js";
import { AppError } from "../../errors.js";

/**
 * Renders server-sent events: `data: {json}` per chunk and a final `data: [DONE]`.
 * The response is only created once the first event is in, so an error that
 * happens before any token still gets its proper HTTP status.
 */
export async function sseResponse(
  events: AsyncGenerator<StreamEvent, void, undefined>,
  toChunks: (event: StreamEvent) => unknown[],
  onCancel: () => void,
): Promise<Response> {
  const first = await events.next(); // throws AppError before anything is sent
  const encoder = new TextEncoder();
  const frame = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (bytes: Uint8Array) => {
        if (!cancelled) controller.enqueue(bytes);
      };
      try {
        if (!first.done) for (const chunk of toChunks(first.value)) send(frame(chunk));
        for await (const event of events) {
          for (const chunk of toChunks(event)) send(frame(chunk));
        }
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError("internal", "The stream failed.");
        send(frame(appError.toBody()));
      }
      if (cancelled) return;
      send(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
    cancel() {
      cancelled = true;
      onCancel();
      void events.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
