import { AppError } from "../../errors.js";
import { eventStreamResponse } from "../event-stream.js";
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
  const frame = (event: ImageRunEvent) =>
    event.type === "progress"
      ? `event: progress\ndata: ${JSON.stringify({ step: event.step, steps: event.steps })}\n\n`
      : `event: result\ndata: ${JSON.stringify(toJson(event))}\n\n`;
  const first = await events.next();
  return eventStreamResponse(
    async (send) => {
      try {
        if (!first.done) send(frame(first.value));
        for await (const event of events) send(frame(event));
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError("internal", "The image request failed.");
        send(`event: error\ndata: ${JSON.stringify(appError.toBody())}\n\n`);
      }
    },
    () => {
      onCancel();
      void events.return(undefined);
    },
  );
}
