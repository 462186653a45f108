import { byteBpeVocab, IM_END_TOKEN, IM_START_TOKEN } from "./byte-bpe-vocab.js";
import { gguf, ggmlTensorBytes, type GgufValue } from "../formats/gguf-types.js";
import { writeGguf, type GgufTensorInput, type GgufWritableType } from "../formats/gguf-writer.js";
import { tensorSeed, uniformValues } from "./random-weights.js";
import type { LlamaShape } from "../formats/llama-shape.js";

/**
 * Llama-architecture GGUF models with seeded random weights and the shapes of real ones,
 * for benchmarks (llama.cpp's speed depends on the shapes, not on the values) and for tests
 * that need a vocabulary of some kind more than a meaningful output.
 *
 * Matrices are drawn with the standard deviation of a fresh Hugging Face initialization
 * (0.02) and norm weights are 1, so activations stay finite through any depth. The
 * tokenizer is a byte-level BPE vocabulary of the shape's size (byte-bpe-vocab.ts) with a
 * ChatML chat template. The output rows of the special tokens are zero: their logit is 0
 * while the greedy choice among tens of thousands of random logits is well above 0, so
 * generation does not end at an end-of-generation token by chance.
 */

/** A shape, and what else a generated file states: RoPE base, norm epsilon, a tied output. */
export interface RandomLlamaShape extends LlamaShape {
  ropeFreqBase: number;
  rmsEpsilon: number;
  /** No output.weight: llama.cpp reuses token_embd.weight as the output layer. */
  tiedOutput: boolean;
}

export interface RandomLlamaOptions {
  /** general.name. */
  name: string;
  shape: RandomLlamaShape;
  seed: number;
  /** general.description; default: "random weights (seed <seed>), for benchmarks only". */
  description?: string;
  /** Storage type of the matrices (norm weights are F32). Default Q8_0. */
  weightType?: GgufWritableType;
  /** The tokenizer, of the shape's vocabulary size; default a byte-level BPE one with ChatML. */
  vocabulary?: LlamaVocabulary;
}

/** A tokenizer as a model file holds it: its tokens and `tokenizer.*` metadata. */
export interface LlamaVocabulary {
  tokens: readonly string[];
  metadata: Record<string, GgufValue>;
  /** Tokens with zero output rows: their logit is 0, so a generation does not end on them by chance. */
  specialIds: readonly number[];
}

export interface RandomLlamaPlan {
  metadata: Record<string, GgufValue>;
  /** Tensors whose data is made when it is written. */
  tensors: GgufTensorInput[];
  /** Bytes of tensor data, alignment padding left out. */
  dataBytes: number;
}

export const WEIGHT_STD = 0.02;

/** A ChatML template (the format SmolLM's instruct models use). */
const CHATML_TEMPLATE =
  "{%- for message in messages -%}" +
  `{{- '${IM_START_TOKEN}' + message['role'] + '\\n' + message['content'] + '${IM_END_TOKEN}' + '\\n' -}}` +
  "{%- endfor -%}" +
  `{%- if add_generation_prompt -%}{{- '${IM_START_TOKEN}assistant\\n' -}}{%- endif -%}`;

/** llama.cpp's general.file_type for a model whose matrices are all of one type. */
const fileTypes: Record<GgufWritableType, number> = { F32: 0, F16: 1, Q8_0: 7 };

export function headDimension(shape: RandomLlamaShape): number {
  return shape.embeddingLength / shape.headCount;
}

export function checkLlamaShape(shape: RandomLlamaShape): void {
  const { embeddingLength: n, headCount, headCountKv } = shape;
  const positive = Object.entries(shape).filter(([, v]) => typeof v === "number" && !(v > 0));
  if (positive.length > 0) throw new Error(`llama shape: ${positive.map(([k]) => k).join(", ")} must be positive`);
  if (n % headCount !== 0 || headDimension(shape) % 2 !== 0)
    throw new Error(`llama shape: n_embd ${n} does not split into ${headCount} heads of even size`);
  if (headCount % headCountKv !== 0)
    throw new Error(`llama shape: ${headCount} heads are not a multiple of ${headCountKv} key-value heads`);
}

export function randomLlamaPlan(options: RandomLlamaOptions): RandomLlamaPlan {
  const { shape, seed, name } = options;
  checkLlamaShape(shape);
  const type = options.weightType ?? "Q8_0";
  const vocab = options.vocabulary ?? chatmlByteBpeVocabulary(shape.vocabSize);
  const n = shape.embeddingLength;
  const nKv = shape.headCountKv * headDimension(shape);
  const ff = shape.feedForwardLength;
  const V = shape.vocabSize;
  if (vocab.tokens.length !== V)
    throw new Error(`llama shape: vocabulary of ${V} tokens, tokenizer of ${vocab.tokens.length}`);
  const { specialIds } = vocab;

  const matrix = (tensor: string, rows: number, cols: number, zeroRows: readonly number[] = []): GgufTensorInput => ({
    name: tensor,
    type,
    shape: [rows, cols],
    data: () => {
      const values = uniformValues(rows * cols, WEIGHT_STD, tensorSeed(seed, tensor));
      for (const row of zeroRows) values.fill(0, row * cols, (row + 1) * cols);
      return values;
    },
  });
  const norm = (tensor: string): GgufTensorInput => ({
    name: tensor,
    type: "F32",
    shape: [n],
    data: () => new Float32Array(n).fill(1),
  });

  const tensors: GgufTensorInput[] = [matrix("token_embd.weight", V, n, shape.tiedOutput ? specialIds : [])];
  for (let i = 0; i < shape.blockCount; i++) {
    const blk = `blk.${i}`;
    tensors.push(
      norm(`${blk}.attn_norm.weight`),
      matrix(`${blk}.attn_q.weight`, n, n),
      matrix(`${blk}.attn_k.weight`, nKv, n),
      matrix(`${blk}.attn_v.weight`, nKv, n),
      matrix(`${blk}.attn_output.weight`, n, n),
      norm(`${blk}.ffn_norm.weight`),
      matrix(`${blk}.ffn_gate.weight`, ff, n),
      matrix(`${blk}.ffn_up.weight`, ff, n),
      matrix(`${blk}.ffn_down.weight`, n, ff),
    );
  }
  tensors.push(norm("output_norm.weight"));
  if (!shape.tiedOutput) tensors.push(matrix("output.weight", V, n, specialIds));

  let dataBytes = 0;
  for (const t of tensors) {
    const bytes = ggmlTensorBytes(t.type, t.shape);
    if (typeof bytes === "string") throw new Error(`llama shape: tensor ${t.name}: ${bytes}`);
    dataBytes += bytes;
  }

  const metadata: Record<string, GgufValue> = {
    "general.architecture": gguf.str("llama"),
    "general.type": gguf.str("model"),
    "general.name": gguf.str(name),
    "general.description": gguf.str(options.description ?? `random weights (seed ${seed}), for benchmarks only`),
    "general.file_type": gguf.u32(fileTypes[type]),
    "llama.context_length": gguf.u32(shape.contextLength),
    "llama.embedding_length": gguf.u32(n),
    "llama.block_count": gguf.u32(shape.blockCount),
    "llama.feed_forward_length": gguf.u32(ff),
    "llama.attention.head_count": gguf.u32(shape.headCount),
    "llama.attention.head_count_kv": gguf.u32(shape.headCountKv),
    "llama.attention.layer_norm_rms_epsilon": gguf.f32(shape.rmsEpsilon),
    "llama.rope.dimension_count": gguf.u32(headDimension(shape)),
    "llama.rope.freq_base": gguf.f32(shape.ropeFreqBase),
    "llama.vocab_size": gguf.u32(V),
    ...vocab.metadata,
  };
  return { metadata, tensors, dataBytes };
}

function chatmlByteBpeVocabulary(size: number): LlamaVocabulary {
  const vocab = byteBpeVocab(size);
  return {
    tokens: vocab.tokens,
    specialIds: Object.values(vocab.special),
    metadata: {
      "tokenizer.ggml.model": gguf.str("gpt2"),
      "tokenizer.ggml.pre": gguf.str("gpt-2"),
      "tokenizer.ggml.tokens": gguf.strings(vocab.tokens),
      "tokenizer.ggml.token_type": gguf.i32s(vocab.tokenTypes),
      "tokenizer.ggml.merges": gguf.strings(vocab.merges),
      "tokenizer.ggml.bos_token_id": gguf.u32(vocab.special["<|endoftext|>"]),
      "tokenizer.ggml.eos_token_id": gguf.u32(vocab.special["<|endoftext|>"]),
      "tokenizer.ggml.add_bos_token": gguf.bool(false),
      "tokenizer.chat_template": gguf.str(CHATML_TEMPLATE),
    },
  };
}

/** Writes the model tensor by tensor: memory holds one tensor's values at a time. */
export async function writeRandomLlama(file: string, options: RandomLlamaOptions): Promise<void> {
  const { metadata, tensors } = randomLlamaPlan(options);
  await writeGguf(file, { metadata, tensors });
}
