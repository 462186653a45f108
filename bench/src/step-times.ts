import type { DecodeSample } from "../../src/workers/engine/engine.js";

/**
 * Generation steps (decodes of one token per sequence) and where their time went, summed: the
 * decodes, and the time between a step and the next in its three parts (decode-observer.ts:
 * before the first sampling, the samplings, after the last one). Counted in process from the
 * engine's decode samples, and on the workers from their /metrics (metric-samples.ts).
 */
export interface StepTimes {
  steps: number;
  /** Sequences in those steps: the tokens they generated. */
  sequences: number;
  /** llama.cpp's passes over those steps (one each where their sequence IDs ran on: sequence-ids.ts). */
  passes: number;
  /** The steps' decodes' own time; contexts decoding side by side each count theirs. */
  decodeSeconds: number;
  /** Steps that followed another on their context: those the time between is known for. */
  followed: number;
  beforeSamplingSeconds: number;
  samplingSeconds: number;
  afterSamplingSeconds: number;
}

export function noSteps(): StepTimes {
  return {
    steps: 0,
    sequences: 0,
    passes: 0,
    decodeSeconds: 0,
    followed: 0,
    beforeSamplingSeconds: 0,
    samplingSeconds: 0,
    afterSamplingSeconds: 0,
  };
}

/** Counts one decode into `times`, if it is a generation step. */
export function countDecode(times: StepTimes, decode: DecodeSample): void {
  if (decode.tokens !== decode.sequences) return;
  times.steps++;
  times.sequences += decode.sequences;
  times.passes += decode.passes ?? 1;
  times.decodeSeconds += decode.ms / 1000;
  if (!decode.between) return;
  times.followed++;
  times.beforeSamplingSeconds += decode.between.beforeSamplingMs / 1000;
  times.samplingSeconds += decode.between.samplingMs / 1000;
  times.afterSamplingSeconds += decode.between.afterSamplingMs / 1000;
}

/** `a` and `b` added (op 1) or `b` taken from `a` (op -1), field by field. */
function combine(a: StepTimes, b: StepTimes, op: 1 | -1): StepTimes {
  const out = noSteps();
  for (const key of Object.keys(out) as (keyof StepTimes)[]) out[key] = a[key] + op * b[key];
  return out;
}

/** The steps between two readings of the same counters. */
export const stepsBetween = (before: StepTimes, after: StepTimes): StepTimes => combine(after, before, -1);

/** Several runs' steps together. */
export const sumSteps = (all: StepTimes[]): StepTimes => all.reduce((sum, t) => combine(sum, t, 1), noSteps());

/** One average step: its sequences, its decode and the time until the next, in milliseconds. */
export interface AverageStep {
  sequences: number;
  passes: number;
  decodeMs: number;
  beforeSamplingMs: number;
  samplingMs: number;
  afterSamplingMs: number;
  /** The decode and the time after it: what one step takes from one decode's start to the next's. */
  totalMs: number;
}

/** The average step of `times`, or undefined where no step followed another (nothing to say between). */
export function averageStep(times: StepTimes): AverageStep | undefined {
  if (times.steps === 0 || times.followed === 0) return undefined;
  const per = (seconds: number, count: number) => (seconds / count) * 1000;
  const step = {
    sequences: times.sequences / times.steps,
    passes: times.passes / times.steps,
    decodeMs: per(times.decodeSeconds, times.steps),
    beforeSamplingMs: per(times.beforeSamplingSeconds, times.followed),
    samplingMs: per(times.samplingSeconds, times.followed),
    afterSamplingMs: per(times.afterSamplingSeconds, times.followed),
  };
  return { ...step, totalMs: step.decodeMs + step.beforeSamplingMs + step.samplingMs + step.afterSamplingMs };
}

/**
 * How a report shows an average step: "15.3 sequences in 1 pass: decode 1.37 ms, then 0.16 +
 * sampling 0.28 + 0.31 ms".
 */
export function describeStep(step: AverageStep, round: (n: number) => number): string {
  const passes = round(step.passes);
  return (
    `${round(step.sequences)} sequences in ${passes} pass${passes === 1 ? "" : "es"}: decode ${round(step.decodeMs)} ms, ` +
    `then ${round(step.beforeSamplingMs)} + sampling ${round(step.samplingMs)} + ${round(step.afterSamplingMs)} ms ` +
    "until the next"
  );
}
