import { BYTE_VOCAB_SIZE, END_OF_TEXT, type BigramTable } from "../../src/models/factory/bigram.js";
import type { LoraPair } from "../../src/models/formats/lora-pair.js";
import { oneHotNormGain, outputWeightFromTable, type TinyLlamaShape } from "../../src/models/factory/tiny-llama.js";

/**
 * What a tiny llama built from a bigram table computes, without llama.cpp: the logits
 * for a last token, optionally with a LoRA on output.weight applied as llama.cpp does
 * (W·x + scale·(alpha/rank)·B·(A·x), in float32), and greedy continuation with
 * llama.cpp's tie-break (the first maximum, i.e. the lowest token id).
 *
 * Without a LoRA the logits are bit-exact with llama.cpp's CPU backend (x is one-hot, so
 * each logit is one float32 product). With one, B·(A·x) sums `rank` products whose
 * order llama.cpp may choose differently: compare with a small tolerance.
 */

export interface OracleLora {
  pair: LoraPair;
  alpha: number;
  /** The per-context adapter scale (node-llama-cpp's `scale`), default 1. */
  scale?: number;
}

export interface GreedyResult {
  tokens: number[];
  bytes: Uint8Array;
  /** The bytes as UTF-8 (invalid sequences become U+FFFD). */
  text: string;
  endedWithEndOfText: boolean;
}

export interface BigramOracle {
  /** The logits after token `prev` (a fresh copy). */
  logits(prev: number): Float32Array;
  /** Greedy continuation of a prompt (its bytes are the tokens; empty means `<|endoftext|>`). */
  greedy(prompt: string | Uint8Array, maxTokens: number): GreedyResult;
}

export function createBigramOracle(options: {
  table: BigramTable;
  shape: TinyLlamaShape;
  lora?: OracleLora;
}): BigramOracle {
  const { table, shape, lora } = options;
  const V = BYTE_VOCAB_SIZE;
  const n = shape.embeddingLength;
  const f = Math.fround;
  const g = oneHotNormGain(shape);
  const w = outputWeightFromTable(table, shape);
  const cache = new Map<number, Float32Array>();

  const compute = (prev: number): Float32Array => {
    const out = new Float32Array(V);
    for (let next = 0; next < V; next++) out[next] = f(w[next * n + prev]! * g);
    if (lora === undefined) return out;
    const { pair, alpha } = lora;
    const r = pair.rank;
    const loraScale = f(f((lora.scale ?? 1) * alpha) / r);
    const ax = new Float32Array(r);
    for (let j = 0; j < r; j++) ax[j] = f(pair.a[j * pair.inFeatures + prev]! * g);
    for (let next = 0; next < V; next++) {
      let sum = 0;
      for (let j = 0; j < r; j++) sum = f(sum + f(pair.b[next * r + j]! * ax[j]!));
      out[next] = f(out[next]! + f(sum * loraScale));
    }
    return out;
  };

  const logitsOf = (prev: number): Float32Array => {
    if (!Number.isInteger(prev) || prev < 0 || prev >= V) throw new Error(`token ${prev} is outside the vocabulary`);
    let row = cache.get(prev);
    if (row === undefined) {
      row = compute(prev);
      cache.set(prev, row);
    }
    return row;
  };

  return {
    logits: (prev) => logitsOf(prev).slice(),
    greedy(prompt, maxTokens) {
      const input = typeof prompt === "string" ? new TextEncoder().encode(prompt) : prompt;
      let prev = input.length > 0 ? input[input.length - 1]! : END_OF_TEXT;
      const tokens: number[] = [];
      let endedWithEndOfText = false;
      while (tokens.length < maxTokens) {
        const next = argmaxFirst(logitsOf(prev));
        if (next === END_OF_TEXT) {
          endedWithEndOfText = true;
          break;
        }
        tokens.push(next);
        prev = next;
      }
      const bytes = Uint8Array.from(tokens);
      return { tokens, bytes, text: new TextDecoder().decode(bytes), endedWithEndOfText };
    },
  };
}

/** Index of the first maximum (llama.cpp's greedy sampler keeps the earliest on ties). */
export function argmaxFirst(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
