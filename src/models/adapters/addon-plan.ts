/**
 * What validating an addon yields and converting it consumes. Plain data (JSON-safe), so
 * it can travel in a job payload between validation and conversion.
 */

export interface AddonLimits {
  /** Highest LoRA rank accepted. */
  maxRank: number;
}

/** One adapted base weight. */
export interface AddonLoraWeight {
  /** GGUF name of the base weight, e.g. "blk.0.attn_q.weight". */
  target: string;
  /** The tensors holding A [rank, in] and B [out, rank] in the uploaded file. */
  source: { a: string; b: string };
  rank: number;
  inFeatures: number;
  outFeatures: number;
  /**
   * Multiplier folded into B so that llama.cpp's scale, adapter.lora.alpha / rank, gives
   * PEFT's scale for this module (alpha/r or alpha/√r, with rank_pattern and alpha_pattern).
   * 1 for a GGUF addon.
   */
  bScale: number;
  /**
   * Heads of llama.cpp's rotary row order for this weight's B rows (llama q_proj and
   * k_proj, see rope-row-order.ts), or null when rows stay as they are.
   */
  ropeHeads: number | null;
}

export interface AddonPlan {
  format: "peft" | "gguf";
  /** Highest rank of any adapted weight. */
  rank: number;
  /** GGUF tensor names of the base weights adapted, in the base model's tensor order, e.g. ["blk.0.attn_q.weight", "output.weight"]. */
  targets: string[];
  /** The base model's general.architecture (the adapter's must equal it). */
  architecture: string;
  /** adapter.lora.alpha of the GGUF adapter (for a GGUF addon: its own value, 0 when absent). */
  alpha: number;
  /** One entry per target, in the same order. */
  weights: AddonLoraWeight[];
}

/** A base weight as the plan needs it: its GGUF name, numpy shape and position in the base file. */
export interface PlannedBaseWeight {
  name: string;
  shape: [number, number];
  index: number;
}

/** One adapted weight: the base weight, the A/B tensors that adapt it, and how B is scaled. */
export function adaptedWeight(
  weight: PlannedBaseWeight,
  source: { a: string; b: string },
  rank: number,
  scaling: Pick<AddonLoraWeight, "bScale" | "ropeHeads">,
): AddonLoraWeight & { index: number } {
  const [outFeatures, inFeatures] = weight.shape;
  return { target: weight.name, source, rank, inFeatures, outFeatures, ...scaling, index: weight.index };
}

/** A plan from the adapted weights, each with the base tensor's position: weights go in the base model's tensor order. */
export function addonPlan(
  format: AddonPlan["format"],
  architecture: string,
  alpha: number,
  weights: readonly (AddonLoraWeight & { index: number })[],
): AddonPlan {
  const ordered = [...weights].sort((x, y) => x.index - y.index).map(({ index: _, ...w }) => w);
  return {
    format,
    rank: Math.max(...ordered.map((w) => w.rank)),
    targets: ordered.map((w) => w.target),
    architecture,
    alpha,
    weights: ordered,
  };
}
