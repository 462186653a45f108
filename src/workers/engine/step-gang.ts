import type { BatchItem, EvaluationPriority, PrioritizedBatchItem } from "node-llama-cpp";
import type { PassPlanner } from "./pass-planner.js";

/**
 * Picks what a batch holds from the queued decodes (all of them, or one adapter's); `ids`, their
 * sequence IDs by position, where the strategy reads them.
 */
export type BatchPicker = (items: readonly BatchItem[], ids?: readonly number[]) => readonly BatchItem[];

/** The sequence ID of each queued decode, by position (sequence-ids.ts's queuedSequenceIds, for the context). */
export type QueuedIds = (items: readonly BatchItem[]) => readonly number[];

export interface StrategyOptions {
  /** Chooses among the queued decodes (default: all of them). */
  pick?: BatchPicker;
  /** The queued decodes' sequence IDs: given, batches go in ID order. */
  ids?: QueuedIds;
  /** With `ids`: whether a batch of generation steps only goes in one pass or a pass each. */
  planner?: PassPlanner;
}

/** The evaluation priority of an express request's decodes (node-llama-cpp's highest); others have OTHER_PRIORITY. */
export const EXPRESS_PRIORITY: EvaluationPriority = 5;
export const OTHER_PRIORITY: EvaluationPriority = 3;

/** A prompt (more than the one token of a generation step) of an express request. */
const isExpressPrompt = (item: BatchItem) => item.evaluationPriority === EXPRESS_PRIORITY && item.tokens.length > 1;

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
 * for a sequence that will not come (it has just ended, or waits for something else). Whole
 * steps raise throughput, most at a few sequences, for a few empty rounds a step.
 */
export class StepGang {
  private generating = 0;
  private spins = 0;
  /** The last batch was an express prompt's own: the next one is an ordinary batch. */
  private expressWent = false;

  /** A sequence starts generating (its decodes will be queued one after another). */
  enter(): void {
    this.generating++;
  }

  leave(): void {
    this.generating--;
  }

  /**
   * The batch strategy for node-llama-cpp: `pick` chooses among the queued decodes. The prompt
   * of an express request (evaluated with EXPRESS_PRIORITY) goes at once, in a batch of its own:
   * its first token then waits only for the decode in progress, not for a step of every
   * sequence (a decode's cost grows with the sequences it holds), nor for their samplings. A
   * prompt longer than a batch goes on in turns: each batch of its own is followed by an
   * ordinary one (the steps first, then what room is left to it), so that the others never
   * stall for a whole prefill.
   *
   * With `ids`, a batch goes in sequence ID order: llama.cpp decodes it in one pass only where the
   * IDs follow each other in the batch's order, and makes another pass over all the weights at
   * each place they do not (sequence-ids.ts). The steps keep their room: prompts get what the
   * batch has left after them. A batch of generation steps only goes in reverse order, a pass
   * each, where the planner finds that faster (pass-planner.ts).
   */
  strategy({ pick = (items) => items, ids, planner }: StrategyOptions = {}) {
    return ({ items, size }: { items: readonly BatchItem[]; size: number }): PrioritizedBatchItem[] => {
      // Read once a batch, for the picker and the order, and not for an empty batch.
      let read: readonly number[] | undefined;
      const queued = () => (read ??= ids?.(items));
      const express =
        !this.expressWent && items.some(isExpressPrompt) ? pick(items, queued()).filter(isExpressPrompt) : [];
      if (express.length > 0) {
        this.expressWent = true;
        return express.map((item) => ({ item, processAmount: item.tokens.length }));
      }
      if (items.length < this.generating && this.spins < MAX_SPINS) {
        this.spins++;
        return [];
      }
      this.spins = 0;
      this.expressWent = false;
      const picked = pick(items, queued());
      // Generation steps (one token each) first, so that a long prompt never holds them back.
      const steps = picked.filter((item) => item.tokens.length === 1).slice(0, size);
      const batch: PrioritizedBatchItem[] = steps.map((item) => ({ item, processAmount: 1 }));
      let room = size - steps.length;
      for (const item of picked) {
        if (room <= 0) break;
        if (item.tokens.length === 1) continue;
        const processAmount = Math.min(item.tokens.length, room);
        batch.push({ item, processAmount });
        room -= processAmount;
      }
      const order = queued();
      if (!order) return batch;
      const idOf = new Map(items.map((item, i) => [item, order[i]!]));
      const sign = batch.length === steps.length && planner?.arrange(steps.length) === "apart" ? -1 : 1;
      return batch.sort((a, b) => sign * (idOf.get(a.item)! - idOf.get(b.item)!));
    };
  }
}
