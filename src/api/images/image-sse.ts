import { eventStream, sseFrame } from "../event-stream.js";
import type { ImageRunEvent } from "../services/image-generation.js";

/**
 * An image request as server-sent events: `event: progress` with `{step, steps}` as the
 * worker goes, then `event: result` with the images (or `event: error` with the error
 * body). As with text streams, the response starts with the first event, so an error
 * before it keeps its HTTP status.
 */
export async function imageSse(
  events: AsyncGenerator<ImageRunEvent, void, undefined>,
  toJson: (result: Extract<ImageRunEvent, { type: "result" }>) => unknown,
  onCancel: () => void,
): Promise<Response> {
  return eventStream(events, {
    frames: (event) =>
      event.type === "progress"
        ? sseFrame(JSON.stringify({ step: event.step, steps: event.steps }), { event: "progress" })
        : sseFrame(JSON.stringify(toJson(event)), { event: "result" }),
    error: { event: "error", fallback: "The image request failed." },
    onCancel,
  });
}
