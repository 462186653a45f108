import { AppError } from "../errors.js";

/**
 * The one renderer of server-sent events: OpenAI's chunks (openai/sse.ts) and an image
 * request's progress (images/image-sse.ts) are both written as frames here.
 */

/** One frame: its `id:` and `event:` lines when given, then its `data:` line. */
export function sseFrame(data: string, fields: { id?: number; event?: string } = {}): string {
  const id = fields.id === undefined ? "" : `id: ${fields.id}\n`;
  const event = fields.event === undefined ? "" : `event: ${fields.event}\n`;
  return `${id}${event}data: ${data}\n\n`;
}

export interface EventStreamOptions<E> {
  /** The frames of one event ("" sends nothing). */
  frames: (event: E) => string;
  /**
   * A failure after the first event ends the stream with a frame of the error's OpenAI body:
   * named `event` (a plain data frame without), `fallback` the message of an unexpected error.
   */
  error: { event?: string; fallback: string };
  /** The frame sent last, after the events or the error (OpenAI's `data: [DONE]`). */
  end?: string;
  /** The client left: called once the sending stopped; `events` is then returned. */
  onCancel: () => void;
}

/**
 * A `text/event-stream` response of `events`. It is only created once the first event is in,
 * so an error before any event is thrown to the route and keeps its HTTP status.
 */
export async function eventStream<E>(
  events: AsyncGenerator<E, void, undefined>,
  options: EventStreamOptions<E>,
): Promise<Response> {
  const first = await events.next(); // throws AppError before anything is sent
  return eventStreamResponse(
    async (send) => {
      try {
        if (!first.done) send(options.frames(first.value));
        for await (const event of events) send(options.frames(event));
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError("internal", options.error.fallback);
        send(sseFrame(JSON.stringify(appError.toBody()), { event: options.error.event }));
      }
      if (options.end) send(options.end);
    },
    () => {
      options.onCancel();
      void events.return(undefined);
    },
  );
}

/**
 * The response itself: `produce` writes its frames through `send` until it returns; a client
 * that leaves stops the sending and calls `onCancel`.
 */
function eventStreamResponse(
  produce: (send: (frame: string) => void) => Promise<void>,
  onCancel: () => void,
): Response {
  const encoder = new TextEncoder();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      await produce((frame) => {
        if (!cancelled && frame.length > 0) controller.enqueue(encoder.encode(frame));
      });
      if (!cancelled) controller.close();
    },
    cancel() {
      cancelled = true;
      onCancel();
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
