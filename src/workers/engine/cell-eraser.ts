import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { sequenceIdOf } from "./sequence-ids.js";

interface NativeCells {
  decodeBatch(): Promise<unknown>;
  removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean;
  disposeSequence(sequenceId: number): void;
}

/** node-llama-cpp's record of what a sequence's cells hold (positions 0 … next − 1). */
interface SequenceState {
  _contextTokens: Token[];
  _nextTokenIndex: number;
  _loadedTokenPredictions: unknown[];
}

/**
 * Erases the end of a sequence's KV cells while the others generate.
 *
 * node-llama-cpp erases cells (`eraseContextTokenRanges`, `clearHistory`) under the context's
 * lock, which its batch loop holds for as long as any sequence has a decode queued: with
 * others generating, an erase waits for all of them to end. What llama.cpp needs is less: its
 * memory must not change while a decode of the context runs on another thread. So this wraps
 * the native decode to know when one is in flight, and erases (llama_memory_seq_rm, through
 * the native `removeTokenCellsFromSequence`) at once when none is, else as soon as the one in
 * flight returns, before the loop can start the next: a reused sequence waits for one decode
 * at most. It then brings node-llama-cpp's record of the sequence (its tokens and next
 * position, internals) in line, as its own erase would; the engine tests that reuse a
 * sequence fail on a version where those change.
 *
 * Only the end of a sequence is erased: what stays keeps its positions, nothing shifts.
 */
export class CellEraser {
  private native: NativeCells;
  private decoding = false;
  private pending: (() => void)[] = [];

  constructor(private readonly context: LlamaContext) {
    const native = (context as unknown as { _ctx?: Partial<NativeCells> })._ctx;
    if (
      typeof native?.decodeBatch !== "function" ||
      typeof native.removeTokenCellsFromSequence !== "function" ||
      typeof native.disposeSequence !== "function"
    ) {
      throw new Error("node-llama-cpp's context has no native cell calls: CellEraser needs updating for this version");
    }
    this.native = native as NativeCells;
    const decodeBatch = native.decodeBatch.bind(native);
    Object.defineProperty(native, "decodeBatch", {
      configurable: true,
      value: () => {
        this.runPending();
        this.decoding = true;
        const settled = () => {
          this.decoding = false;
          this.runPending();
        };
        const decoding = decodeBatch();
        decoding.then(settled, settled);
        return decoding;
      },
    });
  }

  /**
   * Keeps the first `keep` cells of `sequence` (which must have nothing queued) and erases the
   * rest; with `keep` 0, every cell of the sequence, those of a decode that failed half-way too.
   */
  keep(sequence: LlamaContextSequence, keep: number): Promise<void> {
    const state = stateOf(sequence);
    return new Promise<void>((resolve, reject) => {
      const erase = () => {
        try {
          this.erase(sequence, state, keep);
          resolve();
        } catch (error) {
          reject(error as Error);
        }
      };
      if (this.decoding) this.pending.push(erase);
      else erase();
    });
  }

  private erase(sequence: LlamaContextSequence, state: SequenceState, keep: number) {
    if (this.context.disposed || sequence.disposed) throw new Error("the sequence's context is disposed");
    if (keep > 0 && keep >= state._nextTokenIndex) return;
    const id = sequenceIdOf(sequence);
    // A partial erase can fail (a model whose cells do not come apart by position): all of it goes then.
    const kept = keep > 0 && this.native.removeTokenCellsFromSequence(id, keep, -1) ? keep : 0;
    if (kept === 0) this.native.disposeSequence(id);
    state._contextTokens = state._contextTokens.slice(0, kept);
    state._nextTokenIndex = kept;
  }

  private runPending() {
    const pending = this.pending;
    this.pending = [];
    for (const erase of pending) erase();
  }
}

function stateOf(sequence: LlamaContextSequence): SequenceState {
  const state = sequence as unknown as Partial<SequenceState>;
  if (
    !Array.isArray(state._contextTokens) ||
    typeof state._nextTokenIndex !== "number" ||
    !Array.isArray(state._loadedTokenPredictions)
  ) {
    throw new Error("node-llama-cpp's sequence has no token record: CellEraser needs updating for this version");
  }
  if (state._loadedTokenPredictions.length > 0) throw new Error("a sequence with token predictions cannot be trimmed");
  return state as SequenceState;
}
