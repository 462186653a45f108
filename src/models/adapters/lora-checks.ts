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
