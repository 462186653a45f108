import type { StreamEvent } from "./stream.js";

/** Puts one event on the wire; events must leave in call order (one Redis connection keeps it). */
export type SendEvent = (event: StreamEvent) => Promise<unknown>;

/**
 * The worker side of the stream contract for one request: its events, in order, with
 * tokens coalesced under back-pressure. A token goes out at once while nothing of the
 * request is in flight, so the first token (and any token of a stream slower than a
 * round trip) is never delayed. Tokens that arrive while sends are in flight wait, and
 * go out together once they have all settled; consecutive tokens of the same choice
 * merge into one whose text is theirs concatenated. A `done` or an `error` never waits:
 * it goes at once, right after the tokens held before it. Nothing is reordered, since
 * events leave in call order on one connection. A failed send is swallowed, as a
 * fire-and-forget PUBLISH always was, and the events after it still go.
 */
export class ReplyPublisher {
  private waiting: StreamEvent[] = [];
  private pending = 0;
  private idle: (() => void)[] = [];

  constructor(private readonly send: SendEvent) {}

  publish(event: StreamEvent): void {
    if (event.type === "token" && this.pending > 0) this.wait(event);
    else this.sendNow([...this.waiting.splice(0), event]);
  }

  /** Resolves once every event published so far has been sent (or failed to be). */
  async drained(): Promise<void> {
    if (this.pending === 0 && this.waiting.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private wait(event: Extract<StreamEvent, { type: "token" }>): void {
    const last = this.waiting.at(-1);
    if (last?.type === "token" && last.index === event.index) {
      this.waiting[this.waiting.length - 1] = { type: "token", index: event.index, text: last.text + event.text };
    } else {
      this.waiting.push(event);
    }
  }

  /** Sends back to back (pipelined); once all in flight have settled, what waited goes. */
  private sendNow(batch: StreamEvent[]): void {
    for (const event of batch) {
      this.pending++;
      void this.trySend(event).then(this.settled);
    }
  }

  private readonly settled = (): void => {
    if (--this.pending > 0) return;
    if (this.waiting.length > 0) {
      this.sendNow(this.waiting.splice(0));
      return;
    }
    for (const resolve of this.idle.splice(0)) resolve();
  };

  /**
   * A send that fails is dropped, not retried: the reply channel is gone with Redis, and the
   * API side ends the waiting request itself when it loses Redis (queues/reply-hub.ts).
   */
  private trySend(event: StreamEvent): Promise<unknown> {
    try {
      return this.send(event).catch(() => undefined);
    } catch {
      return Promise.resolve();
    }
  }
}
