/**
 * One low-rank update of a weight W of numpy shape [outFeatures, inFeatures]:
 * W' = W + scale·(alpha/rank)·B·A, with A [rank, inFeatures] and B [outFeatures, rank],
 * both row-major float32. The same orientation as PEFT's lora_A / lora_B and as
 * llama.cpp's `<tensor>.lora_a` / `.lora_b` (whose GGUF dims are the reverse).
 */
export interface LoraPair {
  rank: number;
  inFeatures: number;
  outFeatures: number;
  a: Float32Array;
  b: Float32Array;
}

export function assertLoraPair(pair: LoraPair, what: string): void {
  const { rank, inFeatures, outFeatures } = pair;
  if (pair.a.length !== rank * inFeatures || pair.b.length !== outFeatures * rank) {
    throw new Error(`${what}: LoRA factors do not match rank ${rank}, ${outFeatures}x${inFeatures}`);
  }
}
