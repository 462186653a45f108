/**
 * A byte-level bigram language model: log P(next | prev) over 257 tokens, the 256
 * byte values (token id = byte) and an end-of-text token (256).
 *
 * P(next | prev) = (count(prev, next) + alpha·U(next)) / (count(prev) + alpha), mixing
 * the pair counts with the add-one unigram distribution U; a context never seen gets U
 * itself, so the argmax of any row is a byte the text actually uses. End-of-text has a
 * fixed tiny probability in every row, so greedy generation runs on until a token limit.
 */

export const BYTE_VOCAB_SIZE = 257;
export const END_OF_TEXT = 256;

export interface BigramOptions {
  /** Weight of the unigram prior in each row (pseudo-count). */
  alpha?: number;
  /** Probability of end-of-text after any token. */
  endOfTextProbability?: number;
}

/** Row-major [prev][next] table of log-probabilities: `table[prev * 257 + next]`. */
export type BigramTable = Float32Array;

export function buildBigramTable(text: string | Uint8Array, options: BigramOptions = {}): BigramTable {
  const alpha = options.alpha ?? 1;
  const pEnd = options.endOfTextProbability ?? 1e-6;
  const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const V = BYTE_VOCAB_SIZE;

  const unigramCounts = new Float64Array(256);
  const pairCounts = new Float64Array(256 * 256);
  const contextCounts = new Float64Array(256);
  for (let i = 0; i < bytes.length; i++) {
    unigramCounts[bytes[i]!]! += 1;
    if (i + 1 < bytes.length) {
      pairCounts[bytes[i]! * 256 + bytes[i + 1]!]! += 1;
      contextCounts[bytes[i]!]! += 1;
    }
  }
  const unigram = new Float64Array(256);
  for (let b = 0; b < 256; b++) unigram[b] = (unigramCounts[b]! + 1) / (bytes.length + 256);

  const table = new Float32Array(V * V);
  for (let prev = 0; prev < V; prev++) {
    const seen = prev < 256 ? contextCounts[prev]! : 0;
    for (let next = 0; next < 256; next++) {
      const p = seen > 0 ? (pairCounts[prev * 256 + next]! + alpha * unigram[next]!) / (seen + alpha) : unigram[next]!;
      table[prev * V + next] = Math.log(p * (1 - pEnd));
    }
    table[prev * V + END_OF_TEXT] = Math.log(pEnd);
  }
  return table;
}

/** log P(next | prev) from a table. */
export function bigramLogProb(table: BigramTable, prev: number, next: number): number {
  return table[prev * BYTE_VOCAB_SIZE + next]!;
}
