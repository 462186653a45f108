import { gpt2ByteChars } from "../formats/gpt2-bytes.js";
import { pretokenize, type WordVocab } from "./word-vocab.js";

/**
 * A word n-gram language model over the words of a text (a 4-gram by default), with
 * interpolated smoothing:
 *
 *   P(n | context) ∝ count(context n) + γ·P(n | shorter context)
 *
 * down to P(n | b) ∝ count(b n) + γ·P(n) and P(n) ∝ count(n). The model is pruned: a context
 * of two words or more is kept only where it changes the most likely next word; elsewhere its
 * longest kept suffix (at worst the last word alone) speaks for it, and it is that suffix's
 * row that the smoothing refines. A token that is not a word of the text is the unknown word,
 * whose row is P(n). A lone space token reads as a line break (a prompt ending in a space
 * continues with a word that starts a line).
 *
 * Rows are log-probabilities over the words. Greedy decoding must not depend on rounding, so
 * in every row the most likely word (the first seen on an exact tie) stays at least `margin`
 * above every other: runners-up closer than that are lowered to it.
 */

export interface WordNgramOptions {
  /** Longest context + 1 (4: a 4-gram, contexts of up to three words). */
  order?: number;
  /** γ: the weight of the shorter context's distribution, against counts. */
  priorWeight?: number;
  /** Least log-probability gap between a row's top word and the others. */
  margin?: number;
}

export interface WordContext {
  /** Word classes, oldest first. */
  words: number[];
  /** Its row: log-probabilities over the words. */
  row: Float64Array;
  /** The row it refines: its longest kept proper suffix's, else its last word's bigram row. */
  parent: Float64Array;
}

export interface WordNgram {
  order: number;
  margin: number;
  /** The token id of each word class. */
  wordTokens: number[];
  /** Class of the unknown word (= wordTokens.length). */
  unknown: number;
  /** Word class of each token id. */
  classOf: Int32Array;
  /** Rows of log-probabilities over the words, per last word's class (the unknown's is the unigram). */
  bigram: Float64Array[];
  /** The kept contexts of two words or more, shortest first, keyed by their classes joined with ",". */
  contexts: Map<string, WordContext>;
  /** The row after a history of word classes: its longest kept context's, else its last word's. */
  row(history: readonly number[]): Float64Array;
}

export function buildWordNgram(text: string, vocab: WordVocab, options: WordNgramOptions = {}): WordNgram {
  const order = options.order ?? 4;
  const gamma = options.priorWeight ?? 0.5;
  const margin = options.margin ?? 0.1;
  if (!Number.isInteger(order) || order < 2) throw new Error(`an n-gram needs order >= 2, not ${order}`);

  const wordTokens = [...new Set([...vocab.wordIds.values()])].sort((a, b) => a - b);
  const W = wordTokens.length;
  const classOf = new Int32Array(vocab.tokens.length).fill(W);
  wordTokens.forEach((token, cls) => {
    classOf[token] = cls;
  });
  const lineBreak = vocab.wordIds.get("\n");
  const space = encodeSpace(vocab);
  if (lineBreak !== undefined && classOf[space] === W) classOf[space] = classOf[lineBreak]!;

  const sequence = pretokenize(text).map((w) => classOf[vocab.wordIds.get(w)!]!);
  // Successor counts per context (classes joined with ","), in order of first appearance.
  const successors = new Map<string, Map<number, number>>();
  for (let i = 0; i < sequence.length; i++) {
    for (let length = 0; length < order && length <= i; length++) {
      const key = sequence.slice(i - length, i).join(",");
      const counts = successors.get(key) ?? new Map<number, number>();
      successors.set(key, counts);
      counts.set(sequence[i]!, (counts.get(sequence[i]!) ?? 0) + 1);
    }
  }

  /** log P: log(count + γ·P(parent)) on seen words, log P(parent) + log γ elsewhere, normalized. */
  const rowOf = (counts: Map<number, number>, parent: Float64Array | undefined): Float64Array => {
    const g = new Float64Array(W);
    if (parent === undefined) g.fill(Number.NEGATIVE_INFINITY);
    else for (let n = 0; n < W; n++) g[n] = parent[n]! + Math.log(gamma);
    for (const [n, count] of counts) g[n] = Math.log(count + (parent === undefined ? 0 : gamma * Math.exp(parent[n]!)));
    // The winner: the highest, the first seen on an exact tie; the others kept `margin` below it.
    let winner = -1;
    for (const n of counts.keys()) if (winner < 0 || g[n]! > g[winner]!) winner = n;
    for (let n = 0; n < W; n++) if (n !== winner) g[n] = Math.min(g[n]!, g[winner]! - margin);
    return logSoftmax(g);
  };

  const unigram = rowOf(successors.get("")!, undefined);
  const bigram: Float64Array[] = [];
  for (let b = 0; b < W; b++) {
    const counts = successors.get(String(b));
    bigram.push(counts === undefined ? unigram : rowOf(counts, unigram));
  }
  bigram.push(unigram);

  // Longer contexts, shortest first; one is kept only where it changes the most likely word.
  const contexts = new Map<string, WordContext>();
  const keptRow = (history: readonly number[]): Float64Array => {
    for (let length = Math.min(order - 1, history.length); length >= 2; length--) {
      const context = contexts.get(history.slice(history.length - length).join(","));
      if (context !== undefined) return context.row;
    }
    return bigram[history.length > 0 ? history[history.length - 1]! : W]!;
  };
  for (let length = 2; length < order; length++) {
    for (const [key, counts] of successors) {
      const words = key === "" ? [] : key.split(",").map(Number);
      if (words.length !== length) continue;
      const parent = keptRow(words.slice(1));
      const row = rowOf(counts, parent);
      if (argmax(row) !== argmax(parent)) contexts.set(key, { words, row, parent });
    }
  }

  return {
    order,
    margin,
    wordTokens,
    unknown: W,
    classOf,
    bigram,
    contexts,
    row: (history) => keptRow(history).slice(),
  };
}

/** The token of a lone space: byte 0x20. */
function encodeSpace(vocab: WordVocab): number {
  return vocab.tokens.indexOf(gpt2ByteChars[0x20]!);
}

/** The first index of the highest value. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function logSoftmax(g: Float64Array): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of g) max = Math.max(max, v);
  let sum = 0;
  for (const v of g) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  return g.map((v) => v - lse);
}
