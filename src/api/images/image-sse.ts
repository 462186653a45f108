import { AppError } from "../../errors.js";
import type { ImageRunEvent } from "../services/image-generation.js";

/**
 * An image request as server-sent events: `event: progress` with `{step, steps}` as the
 * worker goes, then `event: result` with the images (or `event: error` with the error
 * body). As with text streams, the response starts with the first event, so an error
 * before it keeps its HTTP status.
 */
export async function imageSse(
  events: AsyncGenerator<ImageRunEvent>,
  toJson: (result: Extract<ImageRunEvent, { type: "result" }>) => unknown,
  onCancel: () => void,
): Promise<Response> {
  const encoder = new TextEncoder();
  const frame = (event: ImageRunEvent) =>
    encoder.encode(
      event.type === "progress"
        ? `event: progress\ndata: ${JSON.stringify({ step: event.step, steps: event.steps })}\n\n`
        : `event: result\ndata: ${JSON.stringify(toJson(event))}\n\n`,
    );
  const first = await events.next();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        if (!first.done) controller.enqueue(frame(first.value));
        for await (const event of events) if (!cancelled) controller.enqueue(frame(event));
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError("internal", "The image request failed.");
        if (!cancelled)
          controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(appError.toBody())}\n\n`));
      }
      if (!cancelled) controller.close();
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
      "x-accel-buffering": "no",
    },
  });
}
