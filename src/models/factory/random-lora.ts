import type { LoraPair } from "../formats/lora-pair.js";
import { headDimension, type RandomLlamaShape } from "./random-llama.js";
import { tensorSeed, uniformValues } from "./random-weights.js";

/**
 * Seeded random LoRA factors on q_proj and v_proj of every layer of a llama shape, as
 * Hugging Face module paths for writePeftAdapter. A has the spread of PEFT's initialization
 * (Kaiming-uniform, bound 1/√in); B, zero at initialization, is small but non-zero as after
 * training. With alpha = 2·rank the update B·A is about a tenth of a base weight (std 0.02).
 */

export const LORA_B_STD = 0.01;

export function randomQvLoraModules(
  shape: RandomLlamaShape,
  options: { rank: number; seed: number },
): { module: string; pair: LoraPair }[] {
  const { rank, seed } = options;
  const n = shape.embeddingLength;
  const outputs = { q_proj: n, v_proj: shape.headCountKv * headDimension(shape) };
  const modules: { module: string; pair: LoraPair }[] = [];
  for (let layer = 0; layer < shape.blockCount; layer++) {
    for (const [kind, out] of Object.entries(outputs)) {
      const module = `model.layers.${layer}.self_attn.${kind}`;
      modules.push({
        module,
        pair: {
          rank,
          inFeatures: n,
          outFeatures: out,
          a: uniformValues(rank * n, 1 / Math.sqrt(3 * n), tensorSeed(seed, `${module}.lora_A`)),
          b: uniformValues(out * rank, LORA_B_STD, tensorSeed(seed, `${module}.lora_B`)),
        },
      });
    }
  }
  return modules;
}
