import { F16_MAX } from "../formats/half-float.js";
import { fileProblem } from "../formats/model-file-error.js";
import type { AddonLimits } from "./addon-plan.js";

/** Checks both addon formats share: rank limits, factor shapes against the base weight, finite values. */

export function checkRank(rank: number, limits: AddonLimits, label: string, what: string): void {
  if (!Number.isSafeInteger(rank) || rank < 1 || rank > limits.maxRank) {
    throw fileProblem(label, `${what}: rank ${rank} is outside the accepted range, 1 to ${limits.maxRank}`);
  }
}

/**
 * A must be [rank, n_in] and B [n_out, rank] for a base weight of numpy shape [n_out, n_in].
 * Returns the rank.
 */
export function checkFactorShapes(
  label: string,
  a: { name: string; shape: readonly number[] },
  b: { name: string; shape: readonly number[] },
  base: { name: string; shape: readonly [number, number] },
): number {
  const [outFeatures, inFeatures] = base.shape;
  const show = (shape: readonly number[]) => `[${shape.join(", ")}]`;
  if (a.shape.length !== 2 || a.shape[1] !== inFeatures) {
    throw fileProblem(
      label,
      `tensor ${a.name} has shape ${show(a.shape)}, expected [rank, ${inFeatures}] for ${base.name} of shape ${show(base.shape)}`,
    );
  }
  const rank = a.shape[0]!;
  if (b.shape.length !== 2 || b.shape[0] !== outFeatures || b.shape[1] !== rank) {
    throw fileProblem(
      label,
      `tensor ${b.name} has shape ${show(b.shape)}, expected [${outFeatures}, ${rank}] for ${base.name} of shape ${show(base.shape)} and rank ${rank}`,
    );
  }
  return rank;
}

/** The largest magnitude among the values; refuses NaN and infinities. */
export function finiteMaxAbs(values: Float32Array, label: string, tensor: string): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) {
    const v = Math.abs(values[i]!);
    if (!(v <= Number.MAX_VALUE))
      throw fileProblem(label, `tensor ${tensor} holds a non-finite value (${values[i]}) at index ${i}`);
    if (v > max) max = v;
  }
  return max;
}

const PAST_F16 = `past ${F16_MAX}, the largest float16 (llama.cpp may compute in it)`;

/**
 * An alpha (lora_alpha, an alpha_pattern value, adapter.lora.alpha) Hearth accepts: finite
 * and at most the largest float16. llama.cpp may keep or compute an adapter's values in F16
 * (its GPU backends do), where a larger one is infinity and the text NUL bytes; trained
 * adapters use alphas in the tens. Says what is wrong ("1e+38, past 65504, ..."), or undefined.
 */
export function alphaProblem(alpha: number): string | undefined {
  if (!Number.isFinite(alpha)) return "not a finite number";
  if (Math.abs(alpha) > F16_MAX) return `${alpha}, ${PAST_F16}`;
  // llama.cpp reads it as a float32, and takes 0 for "no alpha" (B·A unscaled).
  if (alpha !== 0 && Math.fround(alpha) === 0) return `${alpha}, which a float32 (as llama.cpp reads it) holds as 0`;
  return undefined;
}

/**
 * Refuses a module whose values could leave float16 once llama.cpp applies them: A, B as
 * written to the served file (times bScale), and the scaled product scale·B·A, each element
 * of which is a sum of `rank` products and so at most |scale|·rank·max|A|·max|B|. A sound
 * bound from the maxima validation reads anyway; trained adapters stay orders below it.
 */
export function checkScaledFactors(
  label: string,
  names: { a: string; b: string },
  factors: { rank: number; maxA: number; maxB: number; bScale: number; scale: number; scaleFrom: string },
): void {
  const { rank, maxA, maxB, bScale, scale, scaleFrom } = factors;
  const past = (value: number) => `${value.toPrecision(3)}, ${PAST_F16}`;
  const shown = (value: number) => String(Number(value.toPrecision(4)));
  if (!(maxA <= F16_MAX)) throw fileProblem(label, `tensor ${names.a} holds a value of ${past(maxA)}`);
  if (!(maxB * bScale <= F16_MAX)) {
    const scaled = bScale === 1 ? "" : `, scaled by ${shown(bScale)} (the module's alpha over lora_alpha),`;
    throw fileProblem(label, `tensor ${names.b}${scaled} holds a value of ${past(maxB * bScale)}`);
  }
  const bound = Math.abs(scale) * rank * maxA * maxB;
  if (!(bound <= F16_MAX)) {
    throw fileProblem(
      label,
      `tensors ${names.b} and ${names.a}: scaled by ${shown(scale)} (${scaleFrom}), their product may reach ${past(bound)}`,
    );
  }
}
