import type { Token } from "node-llama-cpp";
import type { TakenSequence } from "./prompt-cache.js";

/** What a request wants of a sequence: its prompt's cells, with its adapter, if they can be reused. */
export interface Want {
  prompt: readonly Token[];
  adapter: string | undefined;
  reuse: boolean;
}

interface Waiter {
  want: Want;
  take(taken: TakenSequence): void;
}

/**
 * The requests of one context waiting for a sequence. A request takes one at once when no
 * other waits ahead of it; otherwise they are served in arrival order, express requests
 * ahead of the others (the express lane, docs/security.md). A cancelled request leaves the
 * queue and gets no sequence.
 */
export class SequenceWaiters {
  private readonly express: Waiter[] = [];
  private readonly other: Waiter[] = [];

  /** `take` gives a sequence for what a request wants, or nothing while none fits. */
  constructor(private readonly take: (want: Want) => TakenSequence | undefined) {}

  /** A sequence for `want`, once one is free; undefined when `signal` aborts first. */
  acquire(want: Want, signal: AbortSignal, express: boolean): Promise<TakenSequence | undefined> {
    const queue = express ? this.express : this.other;
    const now = queue.length === 0 ? this.take(want) : undefined;
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        want,
        take: (taken) => {
          signal.removeEventListener("abort", onAbort);
          resolve(taken);
        },
      };
      const onAbort = () => {
        const at = queue.indexOf(waiter);
        if (at !== -1) queue.splice(at, 1);
        resolve(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
    });
  }

  /** After a sequence went back: the longest-waiting requests take what they can, express ones first. */
  serve(): void {
    for (const queue of [this.express, this.other]) {
      while (queue.length > 0) {
        const taken = this.take(queue[0]!.want);
        if (!taken) return;
        queue.shift()!.take(taken);
      }
    }
  }
}
