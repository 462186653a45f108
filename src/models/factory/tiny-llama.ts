import { BYTE_VOCAB_SIZE, END_OF_TEXT, type BigramTable } from "./bigram.js";
import { gpt2ByteChars } from "../formats/gpt2-bytes.js";
import { gguf, tokenType, type GgufValue } from "../formats/gguf-types.js";
import { writeGguf, type GgufTensorInput, type GgufWritableType } from "../formats/gguf-writer.js";

/**
 * A real one-layer llama-architecture GGUF that computes a bigram table exactly.
 *
 * token_embd is one-hot (token i → e_i), every attention and FFN weight is zero, so the
 * residual stream stays e_prev; the final RMSNorm scales it by g = 1/sqrt(1/n_embd + eps)
 * and `output.weight[next, prev] = logP(next | prev) / g`, so the logits are the table's
 * row for the last token. The byte-level GPT-2 tokenizer (no merges) maps byte b to
 * token b, and `<|endoftext|>` is token 256 (BOS and EOS).
 */

export interface TinyLlamaShape {
  embeddingLength: number;
  headCount: number;
  feedForwardLength: number;
  contextLength: number;
  rmsEpsilon: number;
}

/** hearth-tiny: n_embd 320 = 5 heads of 64. */
export const hearthTinyShape: TinyLlamaShape = {
  embeddingLength: 320,
  headCount: 5,
  feedForwardLength: 32,
  contextLength: 2048,
  rmsEpsilon: 1e-5,
};

/**
 * The final RMSNorm's gain on a one-hot vector, computed the way ggml's CPU kernel does
 * in float32: 1/sqrtf((float)(1/n) + eps).
 */
export function oneHotNormGain(shape: TinyLlamaShape): number {
  const f = Math.fround;
  const mean = f(1 / shape.embeddingLength);
  return f(1 / f(Math.sqrt(f(mean + f(shape.rmsEpsilon)))));
}

/** output.weight in numpy order [vocab (next), n_embd (prev)], row-major. */
export function outputWeightFromTable(table: BigramTable, shape: TinyLlamaShape): Float32Array {
  const V = BYTE_VOCAB_SIZE;
  const n = shape.embeddingLength;
  const g = oneHotNormGain(shape);
  const w = new Float32Array(V * n);
  for (let next = 0; next < V; next++) {
    for (let prev = 0; prev < V; prev++) w[next * n + prev] = table[prev * V + next]! / g;
  }
  return w;
}

export function tinyLlamaMetadata(name: string, shape: TinyLlamaShape): Record<string, GgufValue> {
  const tokens = [...gpt2ByteChars, "<|endoftext|>"];
  return {
    "general.architecture": gguf.str("llama"),
    "general.type": gguf.str("model"),
    "general.name": gguf.str(name),
    "general.file_type": gguf.u32(0),
    "llama.context_length": gguf.u32(shape.contextLength),
    "llama.embedding_length": gguf.u32(shape.embeddingLength),
    "llama.block_count": gguf.u32(1),
    "llama.feed_forward_length": gguf.u32(shape.feedForwardLength),
    "llama.attention.head_count": gguf.u32(shape.headCount),
    "llama.attention.head_count_kv": gguf.u32(shape.headCount),
    "llama.attention.layer_norm_rms_epsilon": gguf.f32(shape.rmsEpsilon),
    "llama.rope.dimension_count": gguf.u32(shape.embeddingLength / shape.headCount),
    "llama.vocab_size": gguf.u32(BYTE_VOCAB_SIZE),
    "llama.pooling_type": gguf.u32(1),
    "tokenizer.ggml.model": gguf.str("gpt2"),
    "tokenizer.ggml.pre": gguf.str("gpt-2"),
    "tokenizer.ggml.tokens": gguf.strings(tokens),
    "tokenizer.ggml.token_type": gguf.i32s(
      tokens.map((_, id) => (id === END_OF_TEXT ? tokenType.control : tokenType.normal)),
    ),
    "tokenizer.ggml.merges": gguf.strings([]),
    "tokenizer.ggml.bos_token_id": gguf.u32(END_OF_TEXT),
    "tokenizer.ggml.eos_token_id": gguf.u32(END_OF_TEXT),
    "tokenizer.ggml.add_bos_token": gguf.bool(false),
  };
}

export async function writeTinyLlama(
  file: string,
  options: {
    table: BigramTable;
    name: string;
    shape?: TinyLlamaShape;
    /** Storage type of the matrices (norm weights stay F32). hearth-tiny is F32. */
    weightType?: GgufWritableType;
    /** More metadata, e.g. `tokenizer.chat_template`. */
    extraMetadata?: Record<string, GgufValue>;
  },
): Promise<void> {
  const shape = options.shape ?? hearthTinyShape;
  const type = options.weightType ?? "F32";
  const n = shape.embeddingLength;
  const ff = shape.feedForwardLength;
  const V = BYTE_VOCAB_SIZE;
  if (n < V || n % shape.headCount !== 0 || (n / shape.headCount) % 2 !== 0) {
    throw new Error(`tiny llama needs n_embd >= ${V} split into heads of even size`);
  }
  const zeros = (name: string, rows: number, cols: number): GgufTensorInput => ({
    name,
    type,
    shape: [rows, cols],
    data: () => new Float32Array(rows * cols),
  });
  const ones = (name: string): GgufTensorInput => ({
    name,
    type: "F32",
    shape: [n],
    data: new Float32Array(n).fill(1),
  });
  const oneHotEmbedding = () => {
    const e = new Float32Array(V * n);
    for (let t = 0; t < V; t++) e[t * n + t] = 1;
    return e;
  };
  const tensors: GgufTensorInput[] = [
    { name: "token_embd.weight", type, shape: [V, n], data: oneHotEmbedding },
    ones("blk.0.attn_norm.weight"),
    zeros("blk.0.attn_q.weight", n, n),
    zeros("blk.0.attn_k.weight", n, n),
    zeros("blk.0.attn_v.weight", n, n),
    zeros("blk.0.attn_output.weight", n, n),
    ones("blk.0.ffn_norm.weight"),
    zeros("blk.0.ffn_gate.weight", ff, n),
    zeros("blk.0.ffn_up.weight", ff, n),
    zeros("blk.0.ffn_down.weight", n, ff),
    ones("output_norm.weight"),
    { name: "output.weight", type, shape: [V, n], data: () => outputWeightFromTable(options.table, shape) },
  ];
  await writeGguf(file, { metadata: { ...tinyLlamaMetadata(options.name, shape), ...options.extraMetadata }, tensors });
}
