/**
 * A `text/event-stream` response: `produce` writes its frames through `send` until it
 * returns; a client that leaves stops the sending and calls `onCancel`. Both stream
 * renderers (OpenAI chunks, image progress) are built on it.
 */
export function eventStreamResponse(
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
