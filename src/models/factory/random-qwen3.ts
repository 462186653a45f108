import path from "node:path";
import { pathExists, writeFileAtomically } from "../formats/atomic-output.js";
import { gguf, type GgufValue } from "../formats/gguf-types.js";
import { readGgufHeader } from "../formats/gguf-reader.js";
import { writeGguf, type GgufTensorInput } from "../formats/gguf-writer.js";
import { readQwen3Vocab, type Qwen3Vocab } from "./qwen3-vocab.js";
import { tensorSeed, uniformValues } from "./random-weights.js";

/**
 * qwen3-vocab-tiny: a tiny qwen3-architecture model with random weights and Qwen3's real
 * tokenizer and chat template (qwen3-vocab.ts), so that tests see what a served Qwen3 gives
 * Hearth: its tokens, its template with tools and `<tool_call>` tags, its end-of-turn token.
 *
 * Random weights alone make every token about equally likely, so nothing would ever start or
 * end a tool call. A few next-token rules are planted, each on a residual dimension of its own
 * (the last dimensions): the rule's source token writes 1 there in its embedding, nothing else
 * does (those dimensions are zero in every other embedding and in every attention and FFN
 * output), and the output layer reads it only into the rule's target token. After the source
 * token the target's logit is about `logit`, while the other 151k tokens' stay near 0:
 *
 *   "\n"            → "<tool_call>"  logit ≈ ln(vocabulary): sampled from the whole vocabulary
 *                                    (top_p 1, top_k 0) at temperature 1, about 60% of the
 *                                    answers (which start after "assistant\n") open a tool
 *                                    call; greedy decoding and the default top-k/top-p always do
 *   "</tool_call>"  → "<|im_end|>"   certain: a call's end ends the turn
 *
 * Apart from those, special tokens have zero output rows, so a generation does not end by
 * chance. The embeddings are Q8_0 (the bulk of the file: two matrices of vocabulary × 64),
 * the norms F32.
 */

export const QWEN3_VOCAB_TINY_ID = "qwen3-vocab-tiny";
export const QWEN3_VOCAB_TINY_SEED = 3;

const shape = {
  embeddingLength: 64,
  blockCount: 2,
  headCount: 2,
  headCountKv: 1,
  /** qwen3 states its head size apart from embedding ÷ heads (Qwen3-0.6B: 1024 wide, 16 heads of 128). */
  headDimension: 64,
  feedForwardLength: 128,
  contextLength: 4096,
  ropeFreqBase: 1_000_000,
  rmsEpsilon: 1e-6,
};

/** A planted rule: after `from`, `to` gets about `logit`. */
interface PlantedRule {
  from: string;
  to: string;
  /** The output weight on the rule's dimension; the final norm scales that dimension to about 7.5. */
  weight: number;
}

const WEIGHT_STD = 0.02;

const plantedRules: readonly PlantedRule[] = [
  { from: "Ċ", to: "<tool_call>", weight: 1.6 },
  { from: "</tool_call>", to: "<|im_end|>", weight: 3 },
];

const description = `random weights (seed ${QWEN3_VOCAB_TINY_SEED}) with Qwen3's tokenizer and chat template, for tests`;
/** What the weights are made from, kept in the file: a file made from another recipe is rebuilt. */
const recipe = JSON.stringify({ shape, plantedRules, seed: QWEN3_VOCAB_TINY_SEED, std: WEIGHT_STD });
const RECIPE_KEY = "hearth.factory.recipe";

export interface Qwen3VocabModel {
  file: string;
  /** Whether this call wrote it (false: it was already there). */
  written: boolean;
}

/** Builds `<dir>/qwen3-vocab-tiny.gguf` unless it is there already (or `force`). */
export async function buildQwen3VocabModel(dir: string, options: { force?: boolean } = {}): Promise<Qwen3VocabModel> {
  const file = path.join(path.resolve(dir), `${QWEN3_VOCAB_TINY_ID}.gguf`);
  if (!options.force && (await isBuilt(file))) return { file, written: false };
  const vocab = await readQwen3Vocab();
  await writeFileAtomically(file, (tmp) => writeGguf(tmp, { metadata: metadata(vocab), tensors: tensors(vocab) }));
  return { file, written: true };
}

async function isBuilt(file: string): Promise<boolean> {
  if (!(await pathExists(file))) return false;
  const header = await readGgufHeader(file).catch(() => undefined);
  return header?.metadata.get(RECIPE_KEY)?.value === recipe;
}

function metadata(vocab: Qwen3Vocab): Record<string, GgufValue> {
  const a = "qwen3";
  return {
    "general.architecture": gguf.str(a),
    "general.type": gguf.str("model"),
    "general.name": gguf.str(QWEN3_VOCAB_TINY_ID),
    "general.description": gguf.str(description),
    "general.file_type": gguf.u32(7),
    [RECIPE_KEY]: gguf.str(recipe),
    [`${a}.context_length`]: gguf.u32(shape.contextLength),
    [`${a}.embedding_length`]: gguf.u32(shape.embeddingLength),
    [`${a}.block_count`]: gguf.u32(shape.blockCount),
    [`${a}.feed_forward_length`]: gguf.u32(shape.feedForwardLength),
    [`${a}.attention.head_count`]: gguf.u32(shape.headCount),
    [`${a}.attention.head_count_kv`]: gguf.u32(shape.headCountKv),
    [`${a}.attention.key_length`]: gguf.u32(shape.headDimension),
    [`${a}.attention.value_length`]: gguf.u32(shape.headDimension),
    [`${a}.attention.layer_norm_rms_epsilon`]: gguf.f32(shape.rmsEpsilon),
    [`${a}.rope.freq_base`]: gguf.f32(shape.ropeFreqBase),
    "tokenizer.ggml.model": gguf.str("gpt2"),
    "tokenizer.ggml.pre": gguf.str("qwen2"),
    "tokenizer.ggml.tokens": gguf.strings(vocab.tokens),
    "tokenizer.ggml.token_type": gguf.i32s(vocab.tokenTypes),
    "tokenizer.ggml.merges": gguf.strings(vocab.merges),
    "tokenizer.ggml.bos_token_id": gguf.u32(vocab.endOfText),
    "tokenizer.ggml.eos_token_id": gguf.u32(vocab.imEnd),
    "tokenizer.ggml.padding_token_id": gguf.u32(vocab.endOfText),
    "tokenizer.ggml.add_bos_token": gguf.bool(false),
    "tokenizer.chat_template": gguf.str(vocab.chatTemplate),
  };
}

function tensors(vocab: Qwen3Vocab): GgufTensorInput[] {
  const n = shape.embeddingLength;
  const V = vocab.tokens.length;
  const qWidth = shape.headCount * shape.headDimension;
  const kvWidth = shape.headCountKv * shape.headDimension;
  const ff = shape.feedForwardLength;
  const ruleDims = plantedRules.map((_, i) => n - plantedRules.length + i);
  const specialIds = vocab.tokenTypes.flatMap((type, id) => (type === 1 ? [] : [id]));

  const random = (name: string, rows: number, cols: number) =>
    uniformValues(rows * cols, WEIGHT_STD, tensorSeed(QWEN3_VOCAB_TINY_SEED, name));
  const matrix = (name: string, rows: number, cols: number, edit?: (w: Float32Array) => void): GgufTensorInput => ({
    name,
    type: "Q8_0",
    shape: [rows, cols],
    data: () => {
      const w = random(name, rows, cols);
      edit?.(w);
      return w;
    },
  });
  const ones = (name: string, size: number): GgufTensorInput => ({
    name,
    type: "F32",
    shape: [size],
    data: () => new Float32Array(size).fill(1),
  });
  /** Nothing but the embedding writes to the rules' dimensions. */
  const zeroRuleRows = (cols: number) => (w: Float32Array) => {
    for (const d of ruleDims) w.fill(0, d * cols, (d + 1) * cols);
  };

  const embedding = matrix("token_embd.weight", V, n, (w) => {
    for (let t = 0; t < V; t++) for (const d of ruleDims) w[t * n + d] = 0;
    plantedRules.forEach((rule, i) => {
      w[vocab.id(rule.from) * n + ruleDims[i]!] = 1;
    });
  });
  const output = matrix("output.weight", V, n, (w) => {
    for (const id of specialIds) w.fill(0, id * n, (id + 1) * n);
    for (let t = 0; t < V; t++) for (const d of ruleDims) w[t * n + d] = 0;
    plantedRules.forEach((rule, i) => {
      w[vocab.id(rule.to) * n + ruleDims[i]!] = rule.weight;
    });
  });

  const list: GgufTensorInput[] = [embedding];
  for (let b = 0; b < shape.blockCount; b++) {
    const blk = `blk.${b}`;
    list.push(
      ones(`${blk}.attn_norm.weight`, n),
      matrix(`${blk}.attn_q.weight`, qWidth, n),
      ones(`${blk}.attn_q_norm.weight`, shape.headDimension),
      matrix(`${blk}.attn_k.weight`, kvWidth, n),
      ones(`${blk}.attn_k_norm.weight`, shape.headDimension),
      matrix(`${blk}.attn_v.weight`, kvWidth, n),
      matrix(`${blk}.attn_output.weight`, n, qWidth, zeroRuleRows(qWidth)),
      ones(`${blk}.ffn_norm.weight`, n),
      matrix(`${blk}.ffn_gate.weight`, ff, n),
      matrix(`${blk}.ffn_up.weight`, ff, n),
      matrix(`${blk}.ffn_down.weight`, n, ff, zeroRuleRows(ff)),
    );
  }
  list.push(ones("output_norm.weight", n), output);
  return list;
}
