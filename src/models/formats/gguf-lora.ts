import { gguf, type GgufValue } from "./gguf-types.js";
import { writeGguf, type GgufTensorInput } from "./gguf-writer.js";
import { assertLoraPair, type LoraPair } from "./lora-pair.js";

/**
 * Writes a LoRA adapter in llama.cpp's GGUF form: `general.type = adapter`,
 * `adapter.type = lora`, `adapter.lora.alpha`, and per adapted weight `<name>.lora_a`
 * (numpy [rank, n_in]) and `<name>.lora_b` (numpy [n_out, rank]). llama.cpp adds
 * scale·(alpha/rank)·B·A to the weight's product.
 */

export const GGUF_LORA_A_SUFFIX = ".lora_a";
export const GGUF_LORA_B_SUFFIX = ".lora_b";

export interface GgufLoraInput {
  /** Must equal the base model's general.architecture. */
  architecture: string;
  name: string;
  alpha: number;
  /** Keyed by the base model's GGUF tensor name, e.g. "output.weight". */
  weights: { tensor: string; pair: LoraPair }[];
}

/** The metadata of a GGUF LoRA adapter. */
export function ggufLoraMetadata(input: {
  architecture: string;
  name: string;
  alpha: number;
}): Record<string, GgufValue> {
  return {
    "general.architecture": gguf.str(input.architecture),
    "general.type": gguf.str("adapter"),
    "general.name": gguf.str(input.name),
    "adapter.type": gguf.str("lora"),
    "adapter.lora.alpha": gguf.f32(input.alpha),
  };
}

export async function writeGgufLora(file: string, input: GgufLoraInput): Promise<void> {
  const tensors: GgufTensorInput[] = [];
  for (const { tensor, pair } of input.weights) {
    assertLoraPair(pair, tensor);
    tensors.push(
      { name: `${tensor}${GGUF_LORA_A_SUFFIX}`, type: "F32", shape: [pair.rank, pair.inFeatures], data: pair.a },
      { name: `${tensor}${GGUF_LORA_B_SUFFIX}`, type: "F32", shape: [pair.outFeatures, pair.rank], data: pair.b },
    );
  }
  await writeGguf(file, { metadata: ggufLoraMetadata(input), tensors });
}
