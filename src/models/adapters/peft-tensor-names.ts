import { fileProblem } from "../formats/model-file-error.js";
import { PEFT_WEIGHTS } from "./addon-file-names.js";
import {
  LAYER_INDEX,
  LORA_MODULES,
  SUPPORTED_MODULES_TEXT,
  isLoraModuleKind,
  type LoraTarget,
} from "./lora-targets.js";

/**
 * The tensor names of a PEFT LoRA saved with save_pretrained for a llama-family causal LM:
 *   base_model.model.model.layers.<i>.self_attn.<q|k|v|o>_proj.lora_<A|B>.weight
 *   base_model.model.model.layers.<i>.mlp.<gate|up|down>_proj.lora_<A|B>.weight
 *   base_model.model.lm_head.lora_<A|B>.weight
 * Anything else is refused with the reason when it is recognisable.
 */

export interface PeftTensorName extends LoraTarget {
  /** The module's name in the base model, as PEFT's patterns see it, e.g. "model.layers.0.self_attn.q_proj". */
  module: string;
  factor: "A" | "B";
}

const standard = new RegExp(
  `^base_model\\.model\\.(?<module>(?:model\\.layers\\.(?<layer>${LAYER_INDEX})\\.(?<parent>[a-z_]+)\\.)?(?<kind>[a-z_]+))\\.lora_(?<factor>A|B)\\.weight$`,
);

export function parsePeftTensorName(name: string): PeftTensorName {
  const fail = (problem: string) => fileProblem(PEFT_WEIGHTS, `tensor ${name} ${problem}`);
  const groups = standard.exec(name)?.groups;
  if (groups !== undefined) {
    const { module, layer, parent, kind, factor } = groups as {
      module: string;
      layer?: string;
      parent?: string;
      kind: string;
      factor: "A" | "B";
    };
    if (isLoraModuleKind(kind) && LORA_MODULES[kind].parent === (parent ?? null)) {
      return { module, kind, layer: layer === undefined ? null : Number(layer), factor };
    }
    throw fail(`adapts ${module}, which Hearth cannot apply a LoRA to (supported modules: ${SUPPORTED_MODULES_TEXT})`);
  }
  if (/\.lora_(A|B)\.[^.]+\.weight$/.test(name)) {
    throw fail(
      "carries an adapter name (as in an in-memory state dict); save the adapter with save_pretrained, " +
        "which writes names ending in .lora_A.weight and .lora_B.weight",
    );
  }
  if (name.includes("lora_embedding_")) {
    throw fail(`is an embedding LoRA, which Hearth cannot apply (supported modules: ${SUPPORTED_MODULES_TEXT})`);
  }
  if (name.includes("lora_magnitude_vector")) throw fail("is a DoRA magnitude vector; DoRA adapters are not supported");
  if (/\.lora_(A|B)\.bias$/.test(name) || name.endsWith(".bias"))
    throw fail("is a bias; LoRA biases are not supported");
  const module = /^base_model\.model\.(.+)\.lora_(A|B)\.weight$/.exec(name);
  if (module !== null) {
    throw fail(
      `adapts ${module[1]}, which Hearth cannot apply a LoRA to (supported modules: ${SUPPORTED_MODULES_TEXT})`,
    );
  }
  throw fail(
    "is not a LoRA weight Hearth understands (expected base_model.model.model.layers.<i>.self_attn.q_proj.lora_A.weight, " +
      "base_model.model.lm_head.lora_B.weight and the like)",
  );
}
