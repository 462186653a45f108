import type { DecodeSample } from "./engine/engine.js";

export interface DecodeSlowdownOptions {
  /** Generation steps of one batch size whose median is compared with the best (16). */
  window: number;
  /** A window this many times slower than the best flags oversubscription (3). */
  factor: number;
  /** ... and one back under this many times the best clears it (1.5). */
  recover: number;
}

export const DEFAULT_SLOWDOWN: DecodeSlowdownOptions = { window: 16, factor: 3, recover: 1.5 };

/** A change of state, for the log. */
export interface SlowdownChange {
  oversubscribed: boolean;
  /** The window's median step time ÷ the best median of that batch size. */
  ratio: number;
  stepMs: number;
  bestMs: number;
  /** The batch size (sequences, rounded up to a power of two) the figures are for. */
  sequences: number;
}

interface Bucket {
  steps: number[];
  bestMs: number;
}

/**
 * Notices when decoding runs far slower than this model's own figure: llama.cpp's threads
 * spin while they wait for each other, so when other processes take the cores a step can
 * take ten times as long. The model's own figure is the best median step time seen for each
 * batch size (a generation step: one token per sequence; prompts are left out, their cost
 * depends on their length); each window of `window` steps of that size is compared with it.
 */
export class DecodeSlowdown {
  private readonly buckets = new Map<number, Bucket>();
  private latestRatio = 1;
  private flagged = false;

  constructor(private readonly options: DecodeSlowdownOptions = DEFAULT_SLOWDOWN) {}

  /** The last window's median ÷ the best of its batch size (1 until a second window ends). */
  get ratio(): number {
    return this.latestRatio;
  }

  get oversubscribed(): boolean {
    return this.flagged;
  }

  /** Counts one decode; returns a change of state when this decode ends a window that makes one. */
  record(sample: DecodeSample): SlowdownChange | undefined {
    if (sample.sequences === 0 || sample.tokens !== sample.sequences) return undefined;
    const size = 2 ** Math.ceil(Math.log2(sample.sequences));
    let bucket = this.buckets.get(size);
    if (!bucket) {
      bucket = { steps: [], bestMs: Number.POSITIVE_INFINITY };
      this.buckets.set(size, bucket);
    }
    bucket.steps.push(sample.ms);
    if (bucket.steps.length < this.options.window) return undefined;
    const stepMs = median(bucket.steps);
    bucket.steps = [];
    const first = !Number.isFinite(bucket.bestMs);
    bucket.bestMs = Math.min(bucket.bestMs, stepMs);
    if (first) return undefined;
    this.latestRatio = stepMs / bucket.bestMs;
    const change = (oversubscribed: boolean): SlowdownChange => {
      this.flagged = oversubscribed;
      return { oversubscribed, ratio: this.latestRatio, stepMs, bestMs: bucket.bestMs, sequences: size };
    };
    if (!this.flagged && this.latestRatio >= this.options.factor) return change(true);
    if (this.flagged && this.latestRatio <= this.options.recover) return change(false);
    return undefined;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
