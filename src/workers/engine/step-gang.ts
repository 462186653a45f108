import type { BatchItem, PrioritizedBatchItem } from "node-llama-cpp";

/** Picks what a batch holds from the queued decodes (all of them, or one adapter's). */
export type BatchPicker = (items: readonly BatchItem[]) => readonly BatchItem[];

/** Empty batches in a row while waiting for the last sequences of a step. */
const MAX_SPINS = 64;

/**
 * Keeps a context's generating sequences in step, so that each decode holds all of them.
 *
 * node-llama-cpp's batch loop looks for queued decodes as soon as the samplings of a batch
 * have resolved, a few microtasks before the last sequence to get its token has queued the
 * next one; left alone, every step holds N − 1 of N sequences and one is always a decode
 * behind (docs/performance.md has a reproduction). Given as the context's batch strategy,
 * this answers with an empty batch while fewer decodes are queued than sequences are
 * generating: the loop goes round again through microtasks only, the laggard queues its
 * token meanwhile, and the step holds everybody. At most MAX_SPINS empty answers in a row,
 * for a sequence that will not come (it has just ended, or waits for something else).
 * Measured with node-llama-cpp alone on the bench model: 57–62 → 80–85 tok/s at 4
 * sequences, 94–98 → 102–113 at 16, about 3 empty rounds a step.
 */
export class StepGang {
  private generating = 0;
  private waiting = 0;
  private spins = 0;

  /** A sequence starts generating (its decodes will be queued one after another). */
  enter(): void {
    this.generating++;
  }

  leave(): void {
    this.generating--;
  }

  /** A generating sequence holds its next token back for a while: do not wait for it. */
  hold(): void {
    this.waiting++;
  }

  resume(): void {
    this.waiting--;
  }

  /** The batch strategy for node-llama-cpp: `pick` chooses among the queued decodes. */
  strategy(pick: BatchPicker = (items) => items) {
    return ({ items }: { items: readonly BatchItem[]; size: number }): PrioritizedBatchItem[] => {
      if (items.length < this.generating - this.waiting && this.spins < MAX_SPINS) {
        this.spins++;
        return [];
      }
      this.spins = 0;
      // Generation steps (one token each) first, so that a long prompt never holds them back.
      const picked = [...pick(items)].sort((a, b) => Number(a.tokens.length > 1) - Number(b.tokens.length > 1));
      return picked.map((item) => ({ item, processAmount: item.tokens.length }));
    };
  }
}
