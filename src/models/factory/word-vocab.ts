import { gpt2ByteChars } from "../formats/gpt2-bytes.js";
import { tokenType } from "../formats/gguf-types.js";

/**
 * A byte-level BPE vocabulary (GPT-2 style, llama.cpp's `gpt2` tokenizer with the `gpt-2`
 * pre-tokenizer) trained on a text until every word of the text is one token: each piece
 * the pre-tokenizer cuts from the text (a word with its leading space, a punctuation run,
 * a line break) becomes a token, reached by merges learned the usual way (the most frequent
 * adjacent pair first). Other text still tokenizes, into bytes and pieces of words.
 *
 * Token ids: the 256 byte tokens (token b is byte b), `<|endoftext|>`, then one token per
 * merge in merge order.
 */

export const END_OF_TEXT_TOKEN = "<|endoftext|>";

/** GPT-2's pre-tokenizer pattern, as llama.cpp's `gpt-2` pre-tokenizer applies it. */
const PRETOKEN_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

export function pretokenize(text: string): string[] {
  return text.match(PRETOKEN_PATTERN) ?? [];
}

/** A text's UTF-8 bytes spelled in GPT-2's byte characters, one string per byte. */
function byteSymbols(text: string): string[] {
  return [...new TextEncoder().encode(text)].map((b) => gpt2ByteChars[b]!);
}

export interface WordVocab {
  /** Token spellings in GPT-2's byte characters. */
  tokens: string[];
  tokenTypes: number[];
  /** "left right" pairs, highest priority first. */
  merges: string[];
  endOfText: number;
  /** The id of each word of the training text (the text as written, e.g. " fire"). */
  wordIds: ReadonlyMap<string, number>;
}

/** Trains the vocabulary on a text's words; ties between equally frequent pairs go to the first pair in string order. */
export function trainWordVocab(text: string): WordVocab {
  const counts = new Map<string, number>();
  for (const word of pretokenize(text)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const words = [...counts].map(([word, count]) => ({ word, count, symbols: byteSymbols(word) }));

  const tokens = [...gpt2ByteChars, END_OF_TEXT_TOKEN];
  const merges: string[] = [];
  // Pair counts over all words, and which words hold each pair, kept up to date as words merge.
  const pairCounts = new Map<string, number>();
  const holders = new Map<string, Set<number>>();
  const count = (index: number, sign: 1 | -1) => {
    const { symbols, count: weight } = words[index]!;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const pair = `${symbols[i]!} ${symbols[i + 1]!}`;
      pairCounts.set(pair, (pairCounts.get(pair) ?? 0) + sign * weight);
      if (sign > 0) {
        const set = holders.get(pair) ?? new Set<number>();
        holders.set(pair, set);
        set.add(index);
      }
    }
  };
  for (let index = 0; index < words.length; index++) count(index, 1);
  for (;;) {
    let best: string | undefined;
    let bestCount = 0;
    for (const [pair, n] of pairCounts) {
      if (n > bestCount || (n === bestCount && n > 0 && best !== undefined && pair < best)) {
        best = pair;
        bestCount = n;
      }
    }
    if (best === undefined) break;
    const [left, right] = best.split(" ") as [string, string];
    merges.push(best);
    tokens.push(left + right);
    for (const index of holders.get(best)!) {
      count(index, -1);
      words[index]!.symbols = mergePair(words[index]!.symbols, left, right);
      count(index, 1);
    }
    pairCounts.delete(best);
    holders.delete(best);
  }

  const idOf = new Map(tokens.map((t, id) => [t, id]));
  const wordIds = new Map(words.map(({ word, symbols }) => [word, idOf.get(symbols[0]!)!]));
  return {
    tokens,
    tokenTypes: tokens.map((t) => (t === END_OF_TEXT_TOKEN ? tokenType.control : tokenType.normal)),
    merges,
    endOfText: idOf.get(END_OF_TEXT_TOKEN)!,
    wordIds,
  };
}

/** Merges every occurrence of (left, right), left to right, as BPE does. */
function mergePair(symbols: string[], left: string, right: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(left + right);
      i++;
    } else out.push(symbols[i]!);
  }
  return out;
}

/** Token ids of a text, as llama.cpp's BPE tokenizer gives them (lowest-rank merge first, leftmost on ties). */
export function encodeWords(vocab: WordVocab, text: string, ranks = mergeRanks(vocab)): number[] {
  const idOf = new Map(vocab.tokens.map((t, id) => [t, id]));
  const ids: number[] = [];
  for (const piece of pretokenize(text)) {
    let symbols = byteSymbols(piece);
    for (;;) {
      let bestRank = Number.POSITIVE_INFINITY;
      let at = -1;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const rank = ranks.get(`${symbols[i]!} ${symbols[i + 1]!}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          at = i;
        }
      }
      if (at < 0) break;
      symbols = [...symbols.slice(0, at), symbols[at]! + symbols[at + 1]!, ...symbols.slice(at + 2)];
    }
    for (const s of symbols) ids.push(idOf.get(s)!);
  }
  return ids;
}

export function mergeRanks(vocab: WordVocab): Map<string, number> {
  return new Map(vocab.merges.map((m, rank) => [m, rank]));
}
