/**
 * llama.cpp's Hugging Face → GGUF converter reorders the rows of a llama model's q_proj
 * and k_proj weights, because llama.cpp rotates adjacent pairs of each head's dimensions
 * where Hugging Face rotates its two halves. Per head of `d` rows, the rows viewed as
 * [2, d/2] are transposed to [d/2, 2] (numpy: reshape(heads, 2, d/2, n_in).swapaxes(1, 2)).
 * q uses the attention head count, k the key-value head count. Other architectures Hearth
 * serves (qwen2, qwen3) are converted without it.
 *
 * A LoRA's update B·A of such a weight needs the same order: B's rows are reordered, A
 * stays as it is.
 */

import type { LoraModuleKind } from "./lora-targets.js";

export function ropeRowHeads(
  architecture: string,
  kind: LoraModuleKind,
  heads: { headCount: number; headCountKv: number },
): number | null {
  if (architecture !== "llama") return null;
  if (kind === "q_proj") return heads.headCount;
  if (kind === "k_proj") return heads.headCountKv;
  return null;
}

/** Whether `rows` splits into `heads` heads of an even number of rows. */
export function fitsRopeRowOrder(rows: number, heads: number): boolean {
  return heads > 0 && rows % (2 * heads) === 0;
}

/** A copy of a row-major [rows, cols] matrix with its rows in llama.cpp's rotary order. */
export function toRopeRowOrder(values: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  if (!fitsRopeRowOrder(rows, heads) || values.length !== rows * cols) {
    throw new Error(`cannot reorder ${rows} rows into ${heads} rotary heads`);
  }
  const half = rows / heads / 2;
  const out = new Float32Array(values.length);
  for (let h = 0; h < heads; h++) {
    for (let part = 0; part < 2; part++) {
      for (let i = 0; i < half; i++) {
        const from = (h * 2 * half + part * half + i) * cols;
        const to = (h * 2 * half + i * 2 + part) * cols;
        out.set(values.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}
