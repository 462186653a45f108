/** One server-sent event as a client sees it: its `id:` (if any) and its data. */
export interface SseEvent {
  id: number | undefined;
  data: string;
}

/**
 * Reads a `text/event-stream` body event by event, as a client would, into `events` (so a
 * test can watch it fill); `stop` after any event drops the connection there (the reader is
 * cancelled). Resolves with what was read, and whether the stream ended by itself (after
 * `data: [DONE]`, or a connection that broke).
 */
export async function readSse(
  response: Response,
  options: { stop?: (read: SseEvent[]) => boolean; events?: SseEvent[] } = {},
): Promise<{ events: SseEvent[]; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events = options.events ?? [];
  let buffer = "";
  for (;;) {
    const part = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (part.done) return { events, ended: true };
    buffer += decoder.decode(part.value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      events.push(event);
      if (options.stop?.(events)) {
        await reader.cancel().catch(() => {});
        return { events, ended: false };
      }
    }
  }
}

function parseEvent(frame: string): SseEvent {
  let id: number | undefined;
  const data: string[] = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith("id: ")) id = Number(line.slice(4));
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  return { id, data: data.join("\n") };
}

/** The text of choice 0 in completion or chat chunks; an error event's message is thrown. */
export function textOf(events: SseEvent[]): string {
  let text = "";
  for (const { data } of events) {
    if (data === "[DONE]") continue;
    const chunk = JSON.parse(data) as {
      error?: { message: string };
      choices?: { text?: string; delta?: { content?: string } }[];
    };
    if (chunk.error) throw new Error(`the stream ended with an error: ${chunk.error.message}`);
    const choice = chunk.choices?.[0];
    text += choice?.text ?? choice?.delta?.content ?? "";
  }
  return text;
}

/** The last event ID a client received (what it sends as Last-Event-ID). */
export const lastEventId = (events: SseEvent[]) => events.findLast((e) => e.id !== undefined)?.id ?? 0;
