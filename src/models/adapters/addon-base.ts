import path from "node:path";
import { checkBaseModelHeader } from "../base/base-model-check.js";
import { readGgufHeader } from "../formats/gguf-reader.js";
import { fileProblem } from "../formats/model-file-error.js";
import type { PlannedBaseWeight } from "./addon-plan.js";
import { OUTPUT_WEIGHT, ggufTargetName, type LoraTarget } from "./lora-targets.js";

/** What validating an addon needs to know of its base model (from the GGUF header alone). */
export interface AddonBase {
  architecture: string;
  blockCount: number;
  headCount: number;
  headCountKv: number;
  /** numpy shapes ([n_out, n_in] for a weight) and positions in the file, by tensor name. */
  tensors: Map<string, { shape: number[]; index: number }>;
}

export async function readAddonBase(file: string): Promise<AddonBase> {
  const header = await readGgufHeader(file);
  const summary = checkBaseModelHeader(header, path.basename(file));
  return {
    architecture: summary.architecture,
    blockCount: summary.blockCount,
    headCount: summary.headCount,
    headCountKv: summary.headCountKv,
    tensors: new Map(header.tensors.map((t, index) => [t.name, { shape: t.shape, index }])),
  };
}

/**
 * The base weight a LoRA tensor adapts, or an error naming the addon file and its tensor:
 * a layer the base does not have, an lm_head LoRA on a base whose output is tied to its
 * embeddings, a base tensor that is missing or not a matrix.
 */
export function baseWeightFor(base: AddonBase, target: LoraTarget, label: string, tensor: string): PlannedBaseWeight {
  const name = ggufTargetName(target);
  if (target.layer !== null && target.layer >= base.blockCount) {
    throw fileProblem(
      label,
      `tensor ${tensor} is for layer ${target.layer}, but the base model has ${base.blockCount} layer${base.blockCount === 1 ? "" : "s"} (0 to ${base.blockCount - 1})`,
    );
  }
  const found = base.tensors.get(name);
  if (found === undefined && name === OUTPUT_WEIGHT) {
    throw fileProblem(
      label,
      `tensor ${tensor} adapts lm_head, but the base model ties its output layer to its token embeddings (it has no ${OUTPUT_WEIGHT}); a LoRA on lm_head cannot be applied to it`,
    );
  }
  if (found === undefined)
    throw fileProblem(label, `tensor ${tensor} adapts ${name}, which the base model does not have`);
  if (found.shape.length !== 2)
    throw fileProblem(label, `tensor ${tensor} adapts ${name}, which is not a matrix in the base model`);
  return { name, shape: found.shape as [number, number], index: found.index };
}
