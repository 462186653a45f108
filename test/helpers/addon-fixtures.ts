/**
 * Builders for addon test cases: PEFT folders with chosen configs and tensors, GGUF
 * copies of a model with edits, seeded random factors, and the q/k row order of
 * llama.cpp's converter written independently of src/.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { seededRandom } from "../../src/images/seeded-random.js";
import { readGgufHeader, readGgufTensor } from "../../src/models/formats/gguf-reader.js";
import type { GgufValue } from "../../src/models/formats/gguf-types.js";
import { writeGguf, type GgufTensorInput } from "../../src/models/formats/gguf-writer.js";
import type { SafetensorsDtype } from "../../src/models/formats/safetensors-format.js";
import { writeSafetensors } from "../../src/models/formats/safetensors-writer.js";
import { testModelDir } from "./test-models.js";

export const tinyBase = path.join(testModelDir, "hearth-tiny.gguf");
export const demoPeftDir = path.join(testModelDir, "examples", "hearth-tiny-lora");
export const demoGgufDir = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");

/** hearth-tiny's shapes. */
export const N_EMBD = 320;
export const N_VOCAB = 257;
export const N_FF = 32;
export const N_HEAD = 5;

export function filesIn(dir: string, names: readonly string[]): Map<string, string> {
  return new Map(names.map((n) => [n, path.join(dir, n)]));
}

/** Uniform pseudo-random numbers in [-1, 1): src's seeded generator (mulberry32), stretched. */
export function signedRandom(seed: number): () => number {
  const random = seededRandom(seed);
  return () => random() * 2 - 1;
}

export function randomMatrix(random: () => number, rows: number, cols: number, amplitude: number): Float32Array {
  return Float32Array.from({ length: rows * cols }, () => random() * amplitude);
}

export const peftName = (module: string, factor: "A" | "B") => `base_model.model.${module}.lora_${factor}.weight`;

export const moduleOf = (kind: string, layer = 0) =>
  kind === "lm_head"
    ? "lm_head"
    : `model.layers.${layer}.${["gate_proj", "up_proj", "down_proj"].includes(kind) ? "mlp" : "self_attn"}.${kind}`;

export function peftConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    base_model_name_or_path: "accounts/hearth/models/hearth-tiny",
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: 4,
    lora_alpha: 8,
    lora_dropout: 0,
    target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"],
    bias: "none",
    fan_in_fan_out: false,
    modules_to_save: null,
    use_rslora: false,
    rank_pattern: {},
    alpha_pattern: {},
    inference_mode: true,
    ...overrides,
  };
}

export interface TensorSpec {
  name: string;
  shape: number[];
  data: Float32Array;
  dtype?: SafetensorsDtype;
}

/** [in, out] of hearth-tiny's weight for a module kind. */
export function moduleShape(kind: string): { inFeatures: number; outFeatures: number } {
  if (kind === "lm_head") return { inFeatures: N_EMBD, outFeatures: N_VOCAB };
  if (kind === "gate_proj" || kind === "up_proj") return { inFeatures: N_EMBD, outFeatures: N_FF };
  if (kind === "down_proj") return { inFeatures: N_FF, outFeatures: N_EMBD };
  return { inFeatures: N_EMBD, outFeatures: N_EMBD };
}

/** A and B of a module with seeded values. */
export function loraTensors(
  module: string,
  rank: number,
  seed: number,
  dtype: SafetensorsDtype = "F32",
  amplitude = 0.1,
): TensorSpec[] {
  const random = signedRandom(seed);
  const { inFeatures, outFeatures } = moduleShape(module.split(".").at(-1)!);
  return [
    {
      name: peftName(module, "A"),
      shape: [rank, inFeatures],
      data: randomMatrix(random, rank, inFeatures, amplitude),
      dtype,
    },
    {
      name: peftName(module, "B"),
      shape: [outFeatures, rank],
      data: randomMatrix(random, outFeatures, rank, amplitude),
      dtype,
    },
  ];
}

/** Writes a PEFT addon folder and returns its file map. */
export async function writePeftFolder(
  dir: string,
  options: { config?: Record<string, unknown>; tensors: TensorSpec[]; hearth?: Record<string, unknown> },
): Promise<Map<string, string>> {
  await writeFile(path.join(dir, "adapter_config.json"), JSON.stringify(options.config ?? peftConfig()));
  await writeSafetensors(
    path.join(dir, "adapter_model.safetensors"),
    options.tensors.map((t) => ({ name: t.name, dtype: t.dtype ?? "F32", shape: t.shape, data: t.data })),
    { format: "pt" },
  );
  const names = ["adapter_config.json", "adapter_model.safetensors"];
  if (options.hearth) {
    await writeFile(path.join(dir, "hearth.json"), JSON.stringify(options.hearth));
    names.push("hearth.json");
  }
  return filesIn(dir, names);
}

/** Copies a GGUF file (tensors as F32), letting a test change its metadata and tensors. */
export async function rewriteGguf(
  source: string,
  target: string,
  edit: {
    metadata?: (metadata: Record<string, GgufValue>) => Record<string, GgufValue>;
    tensors?: (tensors: GgufTensorInput[]) => GgufTensorInput[];
  },
): Promise<void> {
  const header = await readGgufHeader(source);
  const metadata = Object.fromEntries(header.metadata);
  const tensors = header.tensors.map(
    (t): GgufTensorInput => ({ name: t.name, type: "F32", shape: t.shape, data: () => readGgufTensor(source, t) }),
  );
  await writeGguf(target, {
    metadata: edit.metadata ? edit.metadata(metadata) : metadata,
    tensors: edit.tensors ? edit.tensors(tensors) : tensors,
  });
}

/**
 * The row order llama.cpp's convert_hf_to_gguf.py gives llama's q_proj/k_proj weights
 * (LlamaModel.permute): GGUF row h·d + 2i + j holds Hugging Face row h·d + j·d/2 + i.
 */
export function hfToGgufRows(matrix: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  const d = rows / heads;
  const out = new Float32Array(matrix.length);
  for (let row = 0; row < rows; row++) {
    const h = Math.floor(row / d);
    const within = row % d;
    const from = h * d + (within % 2) * (d / 2) + Math.floor(within / 2);
    for (let c = 0; c < cols; c++) out[row * cols + c] = matrix[from * cols + c]!;
  }
  return out;
}

/** The error a promise rejects with. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code?: string; message: string; param?: string | null }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string; param?: string | null };
  }
  throw new Error("expected a rejection");
}
