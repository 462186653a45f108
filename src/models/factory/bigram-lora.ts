import { BYTE_VOCAB_SIZE, type BigramTable } from "./bigram.js";
import type { LoraPair } from "../formats/lora-pair.js";
import { lowRankFactors } from "./low-rank.js";
import { oneHotNormGain, type TinyLlamaShape } from "./tiny-llama.js";

/**
 * The LoRA on a tiny llama's output.weight that moves it from one bigram table toward
 * another: delta[next, prev] = (target − base)[prev → next] / g (the same /g as the
 * weight itself), approximated at `rank` by a truncated SVD. With alpha = rank the
 * adapter applies at scale 1.
 */
export function bigramLora(base: BigramTable, target: BigramTable, shape: TinyLlamaShape, rank: number): LoraPair {
  const V = BYTE_VOCAB_SIZE;
  const n = shape.embeddingLength;
  const g = oneHotNormGain(shape);
  const delta = new Float64Array(V * V);
  for (let next = 0; next < V; next++) {
    for (let prev = 0; prev < V; prev++) {
      delta[next * V + prev] = (target[prev * V + next]! - base[prev * V + next]!) / g;
    }
  }
  const { a: narrow, b } = lowRankFactors(delta, V, V, rank);
  // Columns past the vocabulary (unused embedding dimensions) get zeros.
  const a = new Float32Array(rank * n);
  for (let k = 0; k < rank; k++) a.set(narrow.subarray(k * V, (k + 1) * V), k * n);
  return { rank, inFeatures: n, outFeatures: V, a, b };
}
