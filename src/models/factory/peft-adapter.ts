import { writeFile } from "node:fs/promises";
import path from "node:path";
import { assertLoraPair, type LoraPair } from "../formats/lora-pair.js";
import { writeSafetensors, type SafetensorsTensorInput } from "../formats/safetensors-writer.js";

/**
 * Writes a LoRA adapter in Hugging Face PEFT form: `adapter_config.json` and
 * `adapter_model.safetensors` with `base_model.model.<module>.lora_A.weight` [r, in] and
 * `.lora_B.weight` [out, r] (F32).
 */

export interface PeftAdapterInput {
  baseModel: string;
  rank: number;
  alpha: number;
  /** Keyed by the Hugging Face module path, e.g. "lm_head" or "model.layers.0.self_attn.q_proj". */
  modules: { module: string; pair: LoraPair }[];
}

export const PEFT_CONFIG_FILE = "adapter_config.json";
export const PEFT_WEIGHTS_FILE = "adapter_model.safetensors";

export async function writePeftAdapter(dir: string, input: PeftAdapterInput): Promise<void> {
  const tensors: SafetensorsTensorInput[] = [];
  for (const { module, pair } of input.modules) {
    assertLoraPair(pair, module);
    if (pair.rank !== input.rank)
      throw new Error(`${module}: rank ${pair.rank} differs from the adapter's rank ${input.rank}`);
    const prefix = `base_model.model.${module}`;
    tensors.push(
      { name: `${prefix}.lora_A.weight`, dtype: "F32", shape: [pair.rank, pair.inFeatures], data: pair.a },
      { name: `${prefix}.lora_B.weight`, dtype: "F32", shape: [pair.outFeatures, pair.rank], data: pair.b },
    );
  }
  const targetModules = [...new Set(input.modules.map((m) => m.module.split(".").at(-1)!))].sort();
  const config = {
    base_model_name_or_path: input.baseModel,
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: input.rank,
    lora_alpha: input.alpha,
    lora_dropout: 0,
    target_modules: targetModules,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
  };
  await writeFile(path.join(dir, PEFT_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
  await writeSafetensors(path.join(dir, PEFT_WEIGHTS_FILE), tensors, { format: "pt" });
}
