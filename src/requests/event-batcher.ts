import type { RedisClient } from "../redis/connection.js";
import {
  encodeEvent,
  MAX_EVENT_CHARS,
  sendEvents,
  type OutgoingEvent,
  type ReplyAddress,
  type StreamEvent,
} from "./stream.js";

/** How long an event waits at most for the events of other requests to go with it. */
export const EVENT_BATCH_WINDOW_MS = 1;

interface Waiting extends OutgoingEvent {
  settle(result: number | Error): void;
}

/**
 * A worker's events, sent together (the worker side of the stream contract, under each
 * request's ReplyPublisher). A decode step gives each generating request a token, one after
 * another (samplings run in turn), and each would be a Redis command and a message for the
 * API to read. Here an event waits until every request streaming from this worker has one
 * waiting too (the step is over), or EVENT_BATCH_WINDOW_MS at most, then they all go in one
 * command, and the events for each API process in one message (stream.ts, sendEvents). A
 * request streams from its first event until `finished`; alone, its events go at once. What
 * waits stays within MAX_EVENT_CHARS, so that no message grows past what one event may be (an
 * event that would pass it sends what waits first).
 *
 * Order is kept: events leave in the order they came, in one command or in commands sent one
 * after another on one connection.
 */
export class EventBatcher {
  private waiting: Waiting[] = [];
  /** The characters of the waiting events' messages. */
  private waitingChars = 0;
  /** Requests with an event waiting. */
  private readonly ready = new Set<string>();
  /** Requests that have sent an event and not finished. */
  private readonly streaming = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly windowMs = EVENT_BATCH_WINDOW_MS,
  ) {}

  /** Resolves to the API processes the event reached, as sendEvent does; rejects where it failed. */
  send(to: ReplyAddress, seq: number, event: StreamEvent): Promise<number> {
    const message = encodeEvent(to.requestId, seq, event);
    if (this.waitingChars + message.length > MAX_EVENT_CHARS) this.flush();
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({ to, seq, message, settle: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
      this.waitingChars += message.length;
      this.streaming.add(to.requestId);
      this.ready.add(to.requestId);
      if (this.ready.size >= this.streaming.size) this.flush();
      else this.timer ??= setTimeout(this.flush, this.windowMs);
    });
  }

  /** The request sends no more events: the others no longer wait for its next one. */
  finished(requestId: string): void {
    this.streaming.delete(requestId);
    if (this.waiting.length > 0 && this.ready.size >= this.streaming.size) this.flush();
  }

  private readonly flush = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    this.waitingChars = 0;
    this.ready.clear();
    if (batch.length === 0) return;
    sendEvents(this.redis, batch).then(
      (results) => {
        for (const [i, result] of results.entries()) batch[i]!.settle(result);
      },
      (error: Error) => {
        for (const waiting of batch) waiting.settle(error);
      },
    );
  };
}
