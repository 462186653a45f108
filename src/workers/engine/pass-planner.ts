import type { DecodeSample } from "./engine.js";

/**
 * How a generation step of n sequences goes to llama.cpp: in one pass (their IDs in order), or a
 * pass each (in reverse order, sequence-ids.ts). One pass reads the weights once for all n, which
 * is what a GPU wants at any n; but on a CPU, llama.cpp's matrix kernels for a few tokens at once
 * can cost more than those tokens one at a time. Measured on 2 AMD EPYC vCPUs, 1 thread, the
 * 135M shape in Q8_0 (llamafile's tinyBLAS for 2–8 tokens against a dot product for one):
 * 2 sequences 33 ms in one pass against 19 in two, 4 sequences 40 against 37, 8 sequences 49
 * against 77, 16 sequences 72 against 129 (docs/performance.md). Where the crossing lies depends
 * on the weights' type, the CPU, the threads and the backend, so each context measures its own.
 */
export type Arrangement = "together" | "apart";

interface SizeState {
  together: number[];
  apart: number[];
  /** Steps of this size arranged so far. */
  steps: number;
  /** At this step the arrangement not chosen is tried again, once. */
  nextCheck: number;
  /** Steps between two checks: doubles each time a check confirms the choice. */
  interval: number;
}

/** Samples of each arrangement per size that a decision reads (the latest). */
const KEPT = 8;
/** Samples of each arrangement before the planner decides. */
const FIRST = 3;
/** An arrangement this many times slower than the other after one sample is not tried further at first. */
const HOPELESS = 1.5;
const FIRST_INTERVAL = 64;
const MAX_INTERVAL = 8192;

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * A context's choice, per number of sequences in a step, between one pass and a pass each, by
 * the decode times it has seen: both are tried a few times first (the one slower by half after a
 * single try no further; not at all where one pass won at fewer sequences, as on a GPU from 2 on),
 * then the faster by median goes on, and the other is tried again now and
 * then (after 64 steps of that size, then twice as many after each check that confirms the choice,
 * up to 8,192; at once again after a check that came out faster than the choice), so that a change
 * of load or of the machine is followed. On a GPU, where a pass each costs n times one, that is a
 * few steps of each size in thousands.
 */
export class PassPlanner {
  private readonly sizes = new Map<number, SizeState>();

  /** How to arrange the next generation step of `sequences` sequences. */
  arrange(sequences: number): Arrangement {
    if (sequences < 2) return "together";
    const state = this.stateOf(sequences);
    state.steps++;
    const { together, apart } = state;
    const explored = this.explored(state);
    // One pass at fewer sequences means one pass here: a pass each only costs more with more of them.
    const inferred = !explored && this.togetherBelow(sequences);
    if (!explored && !inferred) return together.length < FIRST ? "together" : "apart";
    const best: Arrangement =
      inferred || apart.length === 0 || median(apart) >= median(together) ? "together" : "apart";
    if (state.steps < state.nextCheck) return best;
    state.nextCheck = state.steps + state.interval;
    state.interval = Math.min(state.interval * 2, MAX_INTERVAL);
    return best === "apart" ? "together" : "apart";
  }

  /**
   * A decode of the context: a generation step's, with `passes` 1, counts for one pass, and with
   * `passes` equal to its sequences for a pass each; any other (IDs apart in the batch), and a
   * decode that is no step, is left out.
   */
  record({ sequences, passes, ms }: Pick<DecodeSample, "sequences" | "passes" | "ms">): void {
    if (sequences < 2 || passes === undefined) return;
    const arrangement: Arrangement | undefined = passes === 1 ? "together" : passes === sequences ? "apart" : undefined;
    if (!arrangement) return;
    const state = this.stateOf(sequences);
    const samples = state[arrangement];
    const before = this.best(state);
    samples.push(ms);
    if (samples.length > KEPT) samples.shift();
    if (!before || arrangement === before) return;
    if (ms < median(state[before])) {
      // A check faster than the choice: check again at once, until the medians say which is faster.
      state.interval = FIRST_INTERVAL;
      state.nextCheck = state.steps + 1;
    } else if (this.best(state) !== before) {
      state.interval = FIRST_INTERVAL;
      state.nextCheck = state.steps + FIRST_INTERVAL;
    }
  }

  /** Both ways tried: a few steps each, or one way's single try slower by half. */
  private explored({ together, apart }: SizeState): boolean {
    if (together.length < FIRST) return false;
    return apart.length >= FIRST || (apart.length > 0 && median(apart) > HOPELESS * median(together));
  }

  /** Whether one pass won at some smaller size. */
  private togetherBelow(sequences: number): boolean {
    for (const [size, state] of this.sizes) {
      if (size < sequences && this.explored(state) && this.best(state) === "together") return true;
    }
    return false;
  }

  private best(state: SizeState): Arrangement | undefined {
    if (state.together.length < FIRST || state.apart.length === 0) return undefined;
    return median(state.apart) < median(state.together) ? "apart" : "together";
  }

  private stateOf(sequences: number): SizeState {
    let state = this.sizes.get(sequences);
    if (!state) {
      state = { together: [], apart: [], steps: 0, nextCheck: FIRST_INTERVAL, interval: FIRST_INTERVAL };
      this.sizes.set(sequences, state);
    }
    return state;
  }
}
