/**
 * The weights Hearth applies LoRA to: the Hugging Face module kinds of llama-family
 * models and the GGUF base tensors they become in llama.cpp.
 */

export const LORA_MODULES = {
  q_proj: { parent: "self_attn", gguf: "attn_q" },
  k_proj: { parent: "self_attn", gguf: "attn_k" },
  v_proj: { parent: "self_attn", gguf: "attn_v" },
  o_proj: { parent: "self_attn", gguf: "attn_output" },
  gate_proj: { parent: "mlp", gguf: "ffn_gate" },
  up_proj: { parent: "mlp", gguf: "ffn_up" },
  down_proj: { parent: "mlp", gguf: "ffn_down" },
  lm_head: { parent: null, gguf: "output" },
} as const;

export type LoraModuleKind = keyof typeof LORA_MODULES;

export const LORA_MODULE_KINDS = Object.keys(LORA_MODULES) as LoraModuleKind[];

export const SUPPORTED_MODULES_TEXT = LORA_MODULE_KINDS.join(", ");

export const OUTPUT_WEIGHT = "output.weight";

export function isLoraModuleKind(value: string): value is LoraModuleKind {
  return Object.hasOwn(LORA_MODULES, value);
}

/** One weight a LoRA adapts: its kind and, except for lm_head, its layer. */
export interface LoraTarget {
  kind: LoraModuleKind;
  layer: number | null;
}

/** The GGUF base tensor of a target, e.g. "blk.3.attn_q.weight" or "output.weight". */
export function ggufTargetName(target: LoraTarget): string {
  const { gguf } = LORA_MODULES[target.kind];
  return target.layer === null ? `${gguf}.weight` : `blk.${target.layer}.${gguf}.weight`;
}

/** A decimal layer index as written in tensor names (no sign, no leading zeros). */
export const LAYER_INDEX = "(0|[1-9][0-9]{0,5})";

const blockTensor = new RegExp(`^blk\\.${LAYER_INDEX}\\.([a-z_]+)\\.weight$`);

/** The target of a GGUF base tensor name, or undefined when Hearth does not adapt that tensor. */
export function parseGgufTargetName(name: string): LoraTarget | undefined {
  if (name === OUTPUT_WEIGHT) return { kind: "lm_head", layer: null };
  const match = blockTensor.exec(name);
  if (match === null) return undefined;
  const kind = LORA_MODULE_KINDS.find((k) => LORA_MODULES[k].parent !== null && LORA_MODULES[k].gguf === match[2]);
  return kind === undefined ? undefined : { kind, layer: Number(match[1]) };
}

export const SUPPORTED_GGUF_TARGETS_TEXT = LORA_MODULE_KINDS.map((k) =>
  LORA_MODULES[k].parent === null ? `${LORA_MODULES[k].gguf}.weight` : `blk.<i>.${LORA_MODULES[k].gguf}.weight`,
).join(", ");
