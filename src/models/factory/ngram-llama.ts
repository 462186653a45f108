import { gguf, type GgufValue } from "../formats/gguf-types.js";
import { writeGguf, type GgufTensorInput } from "../formats/gguf-writer.js";
import { tensorSeed } from "./random-weights.js";
import type { WordNgram } from "./word-ngram.js";
import type { WordVocab } from "./word-vocab.js";

/**
 * A real one-layer llama-architecture GGUF that computes a word n-gram (word-ngram.ts).
 * The residual stream, n_embd wide, holds:
 *
 *   A      one dimension per word class (and the unknown word): the current word, one-hot
 *   P1…Pk  for k = order - 2: a code of the word 1…k positions back (unit vectors of ±1/√C)
 *   CONST  1 for every token;  PAD  written by the feed-forward layer (see below)
 *
 * - token_embd: token t → e_class(t) + e_CONST.
 * - attention: head d (d = 1…k) looks d positions back. Its query and key are constant
 *   vectors (from CONST) that RoPE rotates with the positions; the query is turned back by d
 *   steps, so q·k = λ·Σ_p cos((i - j - d)·θ_p), which peaks where j = i - d (or at the first
 *   token, when the text is shorter than d). λ makes the peak win by `ATTENTION_GAP` nats.
 *   Its value is the code of the word there, written into Pd.
 * - feed-forward (SwiGLU): one unit per word class, firing on A (the bigram row), and one per
 *   kept context (a, …, b), firing when A is b and each Pd matches the code of its word (the
 *   codes' largest cross product is below 1, so a mismatch scores lower by a margin). A firing
 *   unit writes into A its row, centred (minus its mean), less what its parent wrote: the
 *   bigram unit also clears the current word's one-hot. So A ends as the row of the longest
 *   kept context, centred. Each unit also writes into PAD, so that the residual's length is
 *   the same whatever the row, and the final RMSNorm divides every row by the same number.
 * - output: word token n reads A_class(n), scaled to undo the final norm, so its logit is the
 *   row's log-probability (plus a constant); other tokens (bytes, pieces of words,
 *   `<|endoftext|>`) get a logit far below every word's.
 */

/** Code length C, also the attention heads' size. */
const CODE_LENGTH = 128;
/** Gate pre-activation of a matching unit (+) and at most of a non-matching one (-). */
const GATE = 20;
/** Attention logit by which the looked-for position beats every other. */
const ATTENTION_GAP = 30;
const ROPE_BASE = 10_000;
const CONTEXT_LENGTH = 2048;
const RMS_EPSILON = 1e-5;
/** How far below the least likely word the other tokens' logits sit. */
const NON_WORD_DROP = 30;

export interface NgramLlamaShape {
  embeddingLength: number;
  feedForwardLength: number;
  headCount: number;
  codeLength: number;
}

interface Layout {
  classes: number;
  prev: (distance: number) => number;
  constant: number;
  pad: number;
  n: number;
}

function layoutOf(model: WordNgram): Layout {
  const classes = model.unknown + 1;
  const heads = model.order - 2;
  const constant = classes + heads * CODE_LENGTH;
  return {
    classes,
    prev: (distance) => classes + (distance - 1) * CODE_LENGTH,
    constant,
    pad: constant + 1,
    n: roundUp(constant + 2, 32),
  };
}

const roundUp = (value: number, multiple: number) => Math.ceil(value / multiple) * multiple;

export function ngramLlamaShape(model: WordNgram): NgramLlamaShape {
  return {
    embeddingLength: layoutOf(model).n,
    feedForwardLength: roundUp(model.unknown + 1 + model.contexts.size, 32),
    headCount: model.order - 2,
    codeLength: CODE_LENGTH,
  };
}

/** Unit codes of ±1/√C per word class, seeded; with their largest absolute cross product. */
export function wordCodes(classes: number): { codes: Float64Array; coherence: number } {
  const C = CODE_LENGTH;
  const codes = new Float64Array(classes * C);
  let s = tensorSeed(1, "hearth-demo word codes");
  for (let i = 0; i < codes.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    codes[i] = ((s >>> 0) & 1 ? 1 : -1) / Math.sqrt(C);
  }
  let coherence = 0;
  for (let a = 0; a < classes; a++) {
    for (let b = a + 1; b < classes; b++) {
      let dot = 0;
      for (let i = 0; i < C; i++) dot += codes[a * C + i]! * codes[b * C + i]!;
      coherence = Math.max(coherence, Math.abs(dot));
    }
  }
  return { codes, coherence };
}

/** The attention profile Σ_p cos(offset·θ_p) over RoPE's frequencies, and its gap: peak minus the best other offset. */
export function attentionProfile(heads: number): { gap: number } {
  const pairs = CODE_LENGTH / 2;
  const profile = (offset: number) => {
    let sum = 0;
    for (let p = 0; p < pairs; p++) sum += Math.cos(offset * ROPE_BASE ** ((-2 * p) / CODE_LENGTH));
    return sum;
  };
  let gap = Number.POSITIVE_INFINITY;
  for (let offset = -heads; offset < CONTEXT_LENGTH; offset++) {
    if (offset !== 0) gap = Math.min(gap, profile(0) - profile(offset));
  }
  // Before the text is d tokens long, head d must settle on the first token: nearer offsets win.
  for (let offset = 1; offset < heads; offset++) {
    if (!(profile(-offset) > profile(-offset - 1))) throw new Error("attention profile not decreasing near its peak");
  }
  return { gap };
}

/** The row a unit leaves in A, centred on its mean. */
function centred(row: Float64Array): Float64Array {
  let mean = 0;
  for (const v of row) mean += v / row.length;
  return row.map((v) => v - mean);
}

const squaredLength = (v: Float64Array) => v.reduce((sum, x) => sum + x * x, 0);

export async function writeNgramLlama(
  file: string,
  options: {
    model: WordNgram;
    vocab: WordVocab;
    name: string;
    description: string;
    extraMetadata?: Record<string, GgufValue>;
  },
): Promise<void> {
  const { model, vocab } = options;
  const layout = layoutOf(model);
  const shape = ngramLlamaShape(model);
  const { n } = layout;
  const C = CODE_LENGTH;
  const heads = shape.headCount;
  const headWidth = heads * C;
  const V = vocab.tokens.length;
  const W = model.unknown;
  const ff = shape.feedForwardLength;

  const { codes, coherence } = wordCodes(layout.classes);
  if (coherence > 0.6) throw new Error(`word codes too alike (${coherence.toFixed(3)})`);
  const { gap } = attentionProfile(heads);

  // RMSNorm gains: on the embedding (|x|² = 2), after attention (+1 per head), at the end (S²).
  const gain = (squared: number) => 1 / Math.sqrt(squared / n + RMS_EPSILON);
  const r0 = gain(2);
  const r1 = gain(2 + heads);

  // The rows the units leave, centred, and the residual length S that PAD makes up to.
  const units: { gate: (g: Float32Array) => void; row: Float64Array; parent?: Float64Array; cancel?: number }[] = [];
  for (let c = 0; c <= W; c++) {
    const bias = 0.5;
    const scale = GATE / (1 - bias);
    units.push({
      gate: (g) => {
        g[c] = scale / r1;
        g[layout.constant] = (-scale * bias) / r1;
      },
      row: centred(model.bigram[c]!),
      cancel: c,
    });
  }
  for (const context of model.contexts.values()) {
    const L = context.words.length;
    const threshold = L - (1 - coherence) / 2;
    const scale = GATE / ((1 - coherence) / 2);
    const last = context.words[L - 1]!;
    units.push({
      gate: (g) => {
        g[last] = scale / r1;
        for (let d = 1; d < L; d++) {
          const word = context.words[L - 1 - d]!;
          const at = layout.prev(d);
          for (let i = 0; i < C; i++) g[at + i] = (scale * codes[word * C + i]!) / r1;
        }
        g[layout.constant] = (-scale * threshold) / r1;
      },
      row: centred(context.row),
      parent: centred(context.parent),
    });
  }
  let widest = 0;
  for (const unit of units) widest = Math.max(widest, squaredLength(unit.row));
  const fixed = heads + 1; // the codes in P1…Pk and CONST
  const S2 = widest + fixed + 1;
  const padOf = (row: Float64Array) => Math.sqrt(S2 - squaredLength(row) - fixed);
  const rOut = 1 / gain(S2);
  let lowest = 0;
  for (const unit of units) for (const v of unit.row) lowest = Math.min(lowest, v);

  const silu = GATE / (1 + Math.exp(-GATE));
  const matrix = (
    name: string,
    type: GgufTensorInput["type"],
    rows: number,
    cols: number,
    fill: (m: Float32Array, cols: number) => void,
  ): GgufTensorInput => ({
    name,
    type,
    shape: [rows, cols],
    data: () => {
      const m = new Float32Array(rows * cols);
      fill(m, cols);
      return m;
    },
  });
  const ones = (name: string): GgufTensorInput => ({
    name,
    type: "F32",
    shape: [n],
    data: new Float32Array(n).fill(1),
  });

  // q·k over one head is (1/√C)·Σ_p |q_p||k_p| cos(...): amplitude a per pair gives λ = a²/√C.
  const lambda = ATTENTION_GAP / gap;
  const amplitude = Math.sqrt(lambda * Math.sqrt(C));
  const theta = (p: number) => ROPE_BASE ** ((-2 * p) / C);

  const tensors: GgufTensorInput[] = [
    matrix("token_embd.weight", "Q8_0", V, n, (m) => {
      for (let t = 0; t < V; t++) {
        m[t * n + model.classOf[t]!] = 1;
        m[t * n + layout.constant] = 1;
      }
    }),
    ones("blk.0.attn_norm.weight"),
    matrix("blk.0.attn_q.weight", "F32", headWidth, n, (m) => {
      for (let h = 0; h < heads; h++) {
        for (let p = 0; p < C / 2; p++) {
          const angle = -(h + 1) * theta(p);
          m[(h * C + 2 * p) * n + layout.constant] = (amplitude * Math.cos(angle)) / r0;
          m[(h * C + 2 * p + 1) * n + layout.constant] = (amplitude * Math.sin(angle)) / r0;
        }
      }
    }),
    matrix("blk.0.attn_k.weight", "F32", headWidth, n, (m) => {
      for (let h = 0; h < heads; h++) {
        for (let p = 0; p < C / 2; p++) m[(h * C + 2 * p) * n + layout.constant] = amplitude / r0;
      }
    }),
    matrix("blk.0.attn_v.weight", "F32", headWidth, n, (m) => {
      for (let h = 0; h < heads; h++) {
        for (let c = 0; c < layout.classes; c++) {
          for (let i = 0; i < C; i++) m[(h * C + i) * n + c] = codes[c * C + i]! / r0;
        }
      }
    }),
    matrix("blk.0.attn_output.weight", "F32", n, headWidth, (m, cols) => {
      for (let h = 0; h < heads; h++) {
        for (let i = 0; i < C; i++) m[(layout.prev(h + 1) + i) * cols + h * C + i] = 1;
      }
    }),
    ones("blk.0.ffn_norm.weight"),
    matrix("blk.0.ffn_gate.weight", "Q8_0", ff, n, (m) => {
      units.forEach((unit, u) => {
        unit.gate(m.subarray(u * n, (u + 1) * n));
      });
      // Padding units never fire.
      for (let u = units.length; u < ff; u++) m[u * n + layout.constant] = -GATE / r1;
    }),
    matrix("blk.0.ffn_up.weight", "Q8_0", ff, n, (m) => {
      for (let u = 0; u < ff; u++) m[u * n + layout.constant] = 1 / r1;
    }),
    matrix("blk.0.ffn_down.weight", "F16", n, ff, (m, cols) => {
      units.forEach((unit, u) => {
        for (let w = 0; w < W; w++) m[w * cols + u] = (unit.row[w]! - (unit.parent?.[w] ?? 0)) / silu;
        if (unit.cancel !== undefined) m[unit.cancel * cols + u] = m[unit.cancel * cols + u]! - 1 / silu;
        const pad = padOf(unit.row) - (unit.parent ? padOf(unit.parent) : 0);
        m[layout.pad * cols + u] = pad / silu;
      });
    }),
    ones("output_norm.weight"),
    matrix("output.weight", "Q8_0", V, n, (m) => {
      const wordOf = new Map(model.wordTokens.map((token, c) => [token, c]));
      for (let t = 0; t < V; t++) {
        const c = wordOf.get(t);
        if (c !== undefined) m[t * n + c] = rOut;
        else m[t * n + layout.constant] = (lowest - NON_WORD_DROP) * rOut;
      }
    }),
  ];

  const metadata: Record<string, GgufValue> = {
    "general.architecture": gguf.str("llama"),
    "general.type": gguf.str("model"),
    "general.name": gguf.str(options.name),
    "general.description": gguf.str(options.description),
    "general.file_type": gguf.u32(7),
    "llama.context_length": gguf.u32(CONTEXT_LENGTH),
    "llama.embedding_length": gguf.u32(n),
    "llama.block_count": gguf.u32(1),
    "llama.feed_forward_length": gguf.u32(ff),
    "llama.attention.head_count": gguf.u32(heads),
    "llama.attention.head_count_kv": gguf.u32(heads),
    "llama.attention.key_length": gguf.u32(C),
    "llama.attention.value_length": gguf.u32(C),
    "llama.attention.layer_norm_rms_epsilon": gguf.f32(RMS_EPSILON),
    "llama.rope.dimension_count": gguf.u32(C),
    "llama.rope.freq_base": gguf.f32(ROPE_BASE),
    "llama.vocab_size": gguf.u32(V),
    "llama.pooling_type": gguf.u32(1),
    "tokenizer.ggml.model": gguf.str("gpt2"),
    "tokenizer.ggml.pre": gguf.str("gpt-2"),
    "tokenizer.ggml.tokens": gguf.strings(vocab.tokens),
    "tokenizer.ggml.token_type": gguf.i32s(vocab.tokenTypes),
    "tokenizer.ggml.merges": gguf.strings(vocab.merges),
    "tokenizer.ggml.bos_token_id": gguf.u32(vocab.endOfText),
    "tokenizer.ggml.eos_token_id": gguf.u32(vocab.endOfText),
    "tokenizer.ggml.add_bos_token": gguf.bool(false),
    ...options.extraMetadata,
  };
  await writeGguf(file, { metadata, tensors });
}
