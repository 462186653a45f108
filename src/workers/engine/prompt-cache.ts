import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { CellEraser } from "./cell-eraser.js";
import type { PromptCacheSample } from "./engine.js";
import { sequenceIdOf } from "./sequence-ids.js";

/** A sequence no request holds, with the cells it keeps. */
interface Idle {
  readonly sequence: LlamaContextSequence;
  /** The adapter its cells were computed with (its file's path; undefined: the base model). */
  readonly adapter: string | undefined;
  /** Cells it keeps: its first `length` tokens (an erase of the rest may still be queued). */
  length: number;
}

/** A sequence taken for a request: its first `reused` cells are the prompt's, the rest is being erased. */
export interface TakenSequence {
  sequence: LlamaContextSequence;
  reused: number;
  /** Resolves once the cells past `reused` are gone: evaluate from there on. */
  ready: Promise<void>;
}

/**
 * A context's sequences between requests, keeping their KV cells so that a later prompt that
 * starts the same way evaluates only the rest (prompt caching, docs/performance.md).
 *
 * A request takes the idle sequence whose cells share the longest prefix with its prompt (of
 * several sharing as much, the one next to the most busy ones), if that prefix is at least half
 * of the prompt or of what the sequence holds (a common chat header alone is not worth the cells
 * of another conversation). Else it takes the sequence
 * next to the most busy ones of its adapter (an ID one below or above theirs), then one that
 * holds nothing (never used while the context has one), then the least recently used: llama.cpp
 * decodes a batch in one pass only over sequences whose IDs follow each other, and one
 * adapter's sequences are batched together (sequence-ids.ts). 4 requests on 4 sequences apart
 * take 4 passes a step where 4 side by side take one. It keeps the cells of that prefix (never
 * all of the prompt: the last token is evaluated again, for the logits of the first generated
 * token) and the rest is erased.
 * Cells are matched by adapter as well as by token: an adapter changes every cell, so the
 * base model's and each adapter's never serve another.
 *
 * Models whose cells cannot be cut by position (recurrent, sliding-window) keep none.
 *
 * `bound` is the cells idle sequences may keep in all (least recently used cut first, from
 * their end); null: as many as they hold; 0: none (every sequence is cleared when its request
 * ends, and nothing is reused). `cellBytes` is what one cell takes in the KV cache, to report
 * the bytes idle sequences hold (the cells live in the cache every sequence reserves at start:
 * what they take is not taken from anything else).
 */
export class PromptCache {
  /** Least recently used first. */
  private readonly idle: Idle[] = [];
  /** The sequences requests hold, by ID, with the adapter each generates with. */
  private readonly busy = new Map<number, string | undefined>();

  constructor(
    private readonly eraser: CellEraser,
    private readonly bound: number | null,
    /** A sequence never used, while the context has one. */
    private readonly fresh: () => LlamaContextSequence | undefined,
    private readonly cellBytes: number,
    private readonly onSample: (sample: PromptCacheSample) => void = () => {},
  ) {}

  /**
   * A sequence for `prompt` with `adapter`, or undefined when every sequence is busy. With
   * `reuse` false (a request that needs every prompt position's logits) no cell is reused.
   */
  take(prompt: readonly Token[], adapter: string | undefined, reuse: boolean): TakenSequence | undefined {
    const shared = (entry: Idle) =>
      !reuse || entry.adapter !== adapter
        ? 0
        : Math.min(
            entry.sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex,
            entry.length,
            prompt.length - 1,
          );
    let best: Idle | undefined;
    let bestShared = 0;
    for (const entry of this.idle) {
      const common = shared(entry);
      // Of sequences holding as much of the prompt (the same prompt sent by many), the one side by side.
      const closer =
        common === bestShared &&
        best !== undefined &&
        this.neighbours(entry.sequence, adapter) > this.neighbours(best.sequence, adapter);
      if (common > bestShared || closer) [best, bestShared] = [entry, common];
    }
    if (!best || bestShared * 2 < Math.min(prompt.length, best.length)) {
      // The context's sequences are made as they are first needed (node-llama-cpp numbers them in order).
      const sequence = this.fresh();
      if (sequence) this.idle.push({ sequence, adapter: undefined, length: 0 });
      best = undefined;
      let bestRank = -1;
      for (const entry of this.idle) {
        const rank = this.neighbours(entry.sequence, adapter) * 2 + Number(entry.length === 0);
        if (rank > bestRank) [best, bestRank] = [entry, rank];
      }
      if (!best) return undefined;
      bestShared = shared(best);
    }
    this.idle.splice(this.idle.indexOf(best), 1);
    this.busy.set(sequenceIdOf(best.sequence), adapter);
    return this.taken(best.sequence, bestShared, best.length);
  }

  /** How many of the IDs either side of `sequence`'s are busy with `adapter` (0, 1 or 2). */
  private neighbours(sequence: LlamaContextSequence, adapter: string | undefined): number {
    const id = sequenceIdOf(sequence);
    const busyWith = (other: number) => Number(this.busy.has(other) && this.busy.get(other) === adapter);
    return busyWith(id - 1) + busyWith(id + 1);
  }

  /**
   * A request has ended on `sequence`: it keeps its cells (prompt and generated tokens) for the
   * next, unless the request failed, when a decode may have written cells half-way: they all go.
   */
  put(sequence: LlamaContextSequence, adapter: string | undefined, failed: boolean): void {
    // A model whose cells cannot be cut by position (recurrent, or sliding-window attention
    // that drops the cells before its window) keeps none: node-llama-cpp would need checkpoints.
    this.busy.delete(sequenceIdOf(sequence));
    const whole = !failed && this.bound !== 0 && !sequence.needsCheckpoints;
    const entry: Idle = { sequence, adapter, length: whole ? sequence.nextTokenIndex : 0 };
    if (!whole) this.erase(sequence, 0);
    this.idle.push(entry);
    let evicted = 0;
    if (this.bound !== null) {
      let over = this.idle.reduce((sum, e) => sum + e.length, 0) - this.bound;
      for (const e of this.idle) {
        if (over <= 0) break;
        const cut = Math.min(e.length, over);
        if (cut === 0) continue;
        e.length -= cut;
        over -= cut;
        evicted += cut;
        this.erase(e.sequence, e.length);
      }
    }
    this.observe({ lookup: false, reused: 0, evicted }, entry.length - evicted);
  }

  /** The context is going: what its idle sequences held is no more (for the bytes-held figure). */
  drop(): void {
    const held = this.idle.reduce((sum, e) => sum + e.length, 0);
    this.idle.length = 0;
    if (held > 0) this.observe({ lookup: false, reused: 0, evicted: 0 }, -held);
  }

  private taken(sequence: LlamaContextSequence, reused: number, held: number): TakenSequence {
    // The sequence leaves the idle ones: its cells are the request's now.
    this.observe({ lookup: true, reused, evicted: held - reused }, -held);
    // A sequence never used has nothing to erase.
    const blank = held === 0 && sequence.nextTokenIndex === 0;
    return { sequence, reused, ready: blank ? Promise.resolve() : this.eraser.keep(sequence, reused) };
  }

  private observe(sample: Omit<PromptCacheSample, "heldBytes">, heldCells: number) {
    this.onSample({ ...sample, heldBytes: heldCells * this.cellBytes });
  }

  /** A bound's or a failure's erase: nobody waits for it (a request that takes the sequence next waits behind it). */
  private erase(sequence: LlamaContextSequence, keep: number) {
    // It fails only with the context gone, and every sequence with it.
    this.eraser.keep(sequence, keep).catch(() => {});
  }
}

/**
 * Whether the sequence's cells begin with the prompt, as a sequence must to go back to the cache
 * holding them. A generation never fills its context (the prompt and max_tokens fit, and the
 * engine's driver shifts nothing); were cells shifted, those that attended to tokens since
 * erased would no longer be what the prompt gives, and must not be reused.
 */
export function holdsPrompt(sequence: LlamaContextSequence, prompt: readonly Token[]): boolean {
  const held = sequence.nextTokenIndex;
  return sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex >= Math.min(held, prompt.length);
}
