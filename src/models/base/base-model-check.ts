import path from "node:path";
import { AppError } from "../../errors.js";
import { readGgufHeader, type GgufHeader } from "../formats/gguf-reader.js";
import type { GgmlTypeName, GgufValue } from "../formats/gguf-types.js";
import type { LlamaShape } from "../formats/llama-shape.js";

/**
 * Checks a base model GGUF before llama.cpp sees it. llama.cpp aborts the whole
 * process (uncatchably) on some malformed files, e.g. a missing attention head count,
 * so everything it needs to build a llama-family model is verified here first.
 */

export const supportedArchitectures = ["llama", "qwen2", "qwen3"] as const;
export const supportedTokenizers = ["gpt2", "llama"] as const;

const LLAMA_MAX_LAYERS = 512;
const LLAMA_MAX_EXPERTS = 1024;
const ropeScalingTypes = ["none", "linear", "yarn", "longrope"];

export interface BaseModelSummary extends LlamaShape {
  architecture: string;
  name?: string;
  /** general.description: what the file says it is (shown on the model's page). */
  description?: string;
  tokenizerModel: string;
  hasChatTemplate: boolean;
  chatTemplate?: string;
  /** llama.cpp pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank), when the file sets one. */
  poolingType?: number;
  /** Shapes in numpy order (outermost first): a [n_out, n_in] weight reads [n_out, n_in]. */
  tensors: { name: string; shape: number[]; type: GgmlTypeName }[];
}

/** Reads and checks a base model file; throws AppError("invalid_request", "<file>: <problem>"). */
export async function checkLlamaBaseModel(file: string): Promise<BaseModelSummary> {
  const header = await readGgufHeader(file);
  return checkBaseModelHeader(header, path.basename(file));
}

export function checkBaseModelHeader(header: GgufHeader, label: string): BaseModelSummary {
  const meta = new MetadataView(header.metadata, label);

  const generalType = meta.optionalString("general.type");
  if (generalType === "adapter") throw meta.fail("is a LoRA adapter (general.type = adapter), not a base model");

  const architecture = meta.string("general.architecture");
  if (!(supportedArchitectures as readonly string[]).includes(architecture)) {
    throw meta.fail(`unsupported architecture ${architecture} (supported: ${supportedArchitectures.join(", ")})`);
  }
  const a = (key: string) => `${architecture}.${key}`;

  const contextLength = meta.positiveInt(a("context_length"));
  const embeddingLength = meta.positiveInt(a("embedding_length"));
  const blockCount = meta.positiveInt(a("block_count"));
  if (blockCount > LLAMA_MAX_LAYERS) throw meta.fail(`${a("block_count")} ${blockCount} exceeds ${LLAMA_MAX_LAYERS}`);
  const feedForwardLength = Math.max(...meta.positiveIntOrPerLayer(a("feed_forward_length"), blockCount));
  const headCounts = meta.positiveIntOrPerLayer(a("attention.head_count"), blockCount);
  const headCountKvs = meta.has(a("attention.head_count_kv"))
    ? meta.positiveIntOrPerLayer(a("attention.head_count_kv"), blockCount)
    : headCounts;
  for (const [i, h] of headCounts.entries()) {
    const kv = headCountKvs[Math.min(i, headCountKvs.length - 1)]!;
    if (h % kv !== 0) throw meta.fail(`attention head count ${h} is not a multiple of the key-value head count ${kv}`);
  }
  const headCount = headCounts[0]!;
  const headCountKv = headCountKvs[0]!;
  if (!meta.has(a("attention.key_length")) && embeddingLength % headCount !== 0) {
    throw meta.fail(`${a("embedding_length")} ${embeddingLength} is not a multiple of the head count ${headCount}`);
  }
  const eps = meta.number(a("attention.layer_norm_rms_epsilon"));
  if (!(eps > 0 && Number.isFinite(eps)))
    throw meta.fail(`${a("attention.layer_norm_rms_epsilon")} must be a positive number`);

  const ropeScaling = meta.optionalString(a("rope.scaling.type"));
  if (ropeScaling !== undefined && !ropeScalingTypes.includes(ropeScaling)) {
    throw meta.fail(`unknown ${a("rope.scaling.type")} ${ropeScaling}`);
  }
  const experts = meta.has(a("expert_count")) ? meta.int(a("expert_count")) : 0;
  const expertsUsed = meta.has(a("expert_used_count")) ? meta.int(a("expert_used_count")) : 0;
  if (experts > LLAMA_MAX_EXPERTS || expertsUsed > experts || (experts > 0 && expertsUsed === 0)) {
    throw meta.fail(`inconsistent expert counts (${experts} experts, ${expertsUsed} used)`);
  }

  const tokenizerModel = meta.string("tokenizer.ggml.model");
  if (!(supportedTokenizers as readonly string[]).includes(tokenizerModel)) {
    throw meta.fail(
      `unsupported tokenizer.ggml.model ${tokenizerModel} (supported: ${supportedTokenizers.join(", ")})`,
    );
  }
  const vocabSize = meta.array("tokenizer.ggml.tokens", "string").length;
  if (vocabSize === 0) throw meta.fail("tokenizer.ggml.tokens is empty");
  if (tokenizerModel === "gpt2") meta.array("tokenizer.ggml.merges", "string");
  for (const [key, itemTypes] of [
    ["tokenizer.ggml.token_type", ["int32"]],
    ["tokenizer.ggml.scores", ["float32", "int32"]],
  ] as const) {
    if (!meta.has(key)) continue;
    const n = meta.array(key, ...itemTypes).length;
    if (n < vocabSize) throw meta.fail(`${key} has ${n} entries for ${vocabSize} tokens`);
  }
  for (const key of ["bos", "eos", "eot", "eom", "unknown", "separator", "padding"]) {
    const full = `tokenizer.ggml.${key}_token_id`;
    if (meta.has(full) && meta.int(full) >= vocabSize) throw meta.fail(`${full} is outside the vocabulary`);
  }

  const embd = header.tensors.find((t) => t.name === "token_embd.weight");
  if (embd === undefined) throw meta.fail("has no token_embd.weight tensor");
  if (embd.shape.length !== 2 || embd.shape[0] !== vocabSize || embd.shape[1] !== embeddingLength) {
    throw meta.fail(
      `token_embd.weight has shape [${embd.shape.join(", ")}], expected [${vocabSize}, ${embeddingLength}]`,
    );
  }

  const chatTemplate = meta.optionalString("tokenizer.chat_template");
  const poolingType = meta.has(a("pooling_type")) ? meta.int(a("pooling_type")) : undefined;
  return {
    architecture,
    name: meta.optionalString("general.name"),
    ...(meta.has("general.description") ? { description: meta.optionalString("general.description") } : {}),
    contextLength,
    embeddingLength,
    blockCount,
    headCount,
    headCountKv,
    feedForwardLength,
    vocabSize,
    tokenizerModel,
    hasChatTemplate: chatTemplate !== undefined && chatTemplate.length > 0,
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    ...(poolingType !== undefined ? { poolingType } : {}),
    tensors: header.tensors.map((t) => ({ name: t.name, shape: t.shape, type: t.type })),
  };
}

/** Typed, error-reporting access to metadata values. */
class MetadataView {
  constructor(
    private readonly metadata: Map<string, GgufValue>,
    private readonly label: string,
  ) {}

  fail(problem: string): AppError {
    return new AppError("invalid_request", `${this.label}: ${problem}`);
  }

  has(key: string): boolean {
    return this.metadata.has(key);
  }

  private get(key: string): GgufValue {
    const value = this.metadata.get(key);
    if (value === undefined) throw this.fail(`missing ${key}`);
    return value;
  }

  private kind(value: GgufValue): string {
    return value.type === "array" ? `array of ${value.itemType}` : value.type;
  }

  string(key: string): string {
    const value = this.get(key);
    if (value.type !== "string") throw this.fail(`${key} must be a string, not ${this.kind(value)}`);
    return value.value;
  }

  optionalString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }

  number(key: string): number {
    const value = this.get(key);
    if (value.type === "array" || value.type === "string" || value.type === "bool") {
      throw this.fail(`${key} must be a number, not ${this.kind(value)}`);
    }
    return Number(value.value);
  }

  int(key: string): number {
    const value = this.get(key);
    const n = this.number(key);
    if (value.type === "float32" || value.type === "float64" || !Number.isSafeInteger(n) || n < 0) {
      throw this.fail(`${key} must be a non-negative integer`);
    }
    return n;
  }

  positiveInt(key: string): number {
    const n = this.int(key);
    if (n === 0) throw this.fail(`${key} must be positive`);
    return n;
  }

  /** A positive integer, or an array of them with one entry per layer. */
  positiveIntOrPerLayer(key: string, layers: number): number[] {
    const value = this.get(key);
    if (value.type !== "array") return [this.positiveInt(key)];
    if (!["uint32", "int32", "uint64", "int64", "uint16", "uint8"].includes(value.itemType)) {
      throw this.fail(`${key} must hold integers, not ${this.kind(value)}`);
    }
    const items = (value.value as readonly (number | bigint)[]).map(Number);
    if (items.length !== layers) throw this.fail(`${key} has ${items.length} entries for ${layers} layers`);
    if (items.some((n) => !Number.isSafeInteger(n) || n <= 0)) throw this.fail(`${key} must hold positive integers`);
    return items;
  }

  array(key: string, ...itemTypes: string[]): readonly unknown[] {
    const value = this.get(key);
    if (value.type !== "array" || !itemTypes.includes(value.itemType)) {
      throw this.fail(`${key} must be an array of ${itemTypes.join(" or ")}, not ${this.kind(value)}`);
    }
    return value.value;
  }
}
