import { MAX_LOGPROB_TOKENS_PER_EVENT, type StreamEvent } from "./stream.js";

/**
 * How long the tokens of an answer that is not streamed wait to go together (ReplyPublisher's
 * `holdMs`): a generation then sends a few events, not one per token, which spares the API's
 * and Redis's CPU under a flood of such requests.
 */
export const UNSTREAMED_HOLD_MS = 100;

type TokenEvent = Extract<StreamEvent, { type: "token" }>;

/** Two tokens merge unless their logprobs would pass MAX_LOGPROB_TOKENS_PER_EVENT. */
function mergeable(last: TokenEvent, next: TokenEvent): boolean {
  return (last.logprobs?.length ?? 0) + (next.logprobs?.length ?? 0) <= MAX_LOGPROB_TOKENS_PER_EVENT;
}

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
 *
 * With `holdMs`, for an answer nobody reads token by token (a request that is not streamed),
 * the tokens after the first wait up to that long to go together (a hold starts with the first
 * token that waits, and its tokens leave when it ends, or once the sends in flight then have
 * settled), so such an answer sends at most one event per hold: a few events per answer
 * instead of one per token, for the worker, Redis and the API alike, while the first token
 * still goes at once (time to first token, the API's first-token timeout) and the API hears
 * from the request well within its inter-token timeout.
 */
export class ReplyPublisher {
  private waiting: StreamEvent[] = [];
  private pending = 0;
  private idle: (() => void)[] = [];
  private tokenSent = false;
  private hold: NodeJS.Timeout | undefined;
  /** A hold ended while sends were in flight: what waited goes once they settle. */
  private overdue = false;

  constructor(
    private readonly send: SendEvent,
    private readonly holdMs = 0,
  ) {}

  publish(event: StreamEvent): void {
    if (event.type !== "token" && event.type !== "tool_arguments") {
      clearTimeout(this.hold);
      this.hold = undefined;
      this.overdue = false;
      this.sendNow([...this.waiting.splice(0), event]);
    } else if (this.holdMs > 0 && this.tokenSent) {
      // Past the first token, a held answer's tokens leave only when their hold is over.
      this.wait(event);
      if (!this.hold && !this.overdue) this.hold = setTimeout(this.release, this.holdMs);
    } else if (this.pending > 0) {
      this.wait(event);
    } else {
      this.tokenSent = true;
      this.sendNow([...this.waiting.splice(0), event]);
    }
  }

  /** The hold is over: what waited goes now, or as soon as the sends in flight have settled. */
  private readonly release = (): void => {
    this.hold = undefined;
    if (this.waiting.length === 0) return;
    if (this.pending === 0) this.sendNow(this.waiting.splice(0));
    else this.overdue = true;
  };

  /** Resolves once every event published so far has been sent (or failed to be). */
  async drained(): Promise<void> {
    if (this.pending === 0 && this.waiting.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Text (of a choice, or of a tool call's arguments) that follows text of the same goes with it. */
  private wait(event: Extract<StreamEvent, { type: "token" | "tool_arguments" }>): void {
    const last = this.waiting.at(-1);
    if (last?.type === "token" && event.type === "token" && last.index === event.index && mergeable(last, event)) {
      const merged: TokenEvent = { type: "token", index: event.index, text: last.text + event.text };
      if (event.usage) merged.usage = event.usage;
      if (last.logprobs || event.logprobs) merged.logprobs = [...(last.logprobs ?? []), ...(event.logprobs ?? [])];
      this.waiting[this.waiting.length - 1] = merged;
    } else if (
      last?.type === "tool_arguments" &&
      event.type === "tool_arguments" &&
      last.index === event.index &&
      last.call === event.call
    ) {
      this.waiting[this.waiting.length - 1] = {
        ...last,
        text: last.text + event.text,
        usage: event.usage ?? last.usage,
      };
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
      // Tokens of a held answer wait for their hold, however soon the sends before them settle.
      if (this.hold) return;
      this.overdue = false;
      this.sendNow(this.waiting.splice(0));
      return;
    }
    for (const resolve of this.idle.splice(0)) resolve();
  };

  /**
   * A send that fails is dropped, not retried: the reply channel is gone with Redis, and the
   * API side ends the waiting request itself when it loses Redis (requests/reply-hub.ts).
   */
  private trySend(event: StreamEvent): Promise<unknown> {
    try {
      return this.send(event).catch(() => undefined);
    } catch {
      return Promise.resolve();
    }
  }
}
