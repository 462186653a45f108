import { gpt2ByteChars } from "../formats/gpt2-bytes.js";
import { tokenType } from "../formats/gguf-types.js";

/**
 * A GPT-2 style byte-level BPE vocabulary of any size, for models with made-up weights:
 * the 256 byte tokens (token b is byte b), a few special tokens, then multi-byte tokens
 * up to the requested size, each with the merge that makes it, so text tokenizes into
 * tokens of two or three bytes as it would with a trained vocabulary. Every token is
 * spelled with GPT-2's byte characters, so any token id detokenizes to bytes.
 *
 * Multi-byte tokens are made shortest first, each one a token of the previous length
 * plus one byte, common bytes first (see bytesByRank).
 * The merge list is in token order, which is also its priority.
 */

export const END_OF_TEXT_TOKEN = "<|endoftext|>";
export const IM_START_TOKEN = "<|im_start|>";
export const IM_END_TOKEN = "<|im_end|>";
/** The special tokens, in id order right after the 256 byte tokens. */
export const specialTokens = [END_OF_TEXT_TOKEN, IM_START_TOKEN, IM_END_TOKEN] as const;

export interface ByteBpeVocab {
  tokens: string[];
  tokenTypes: number[];
  merges: string[];
  /** Token id of each special token. */
  special: Record<(typeof specialTokens)[number], number>;
}

const BYTES = 256;

/** Byte values, commonest in text first: space, letters, digits, punctuation, newline, tab, the rest. */
function bytesByRank(): number[] {
  const range = (from: string, to: string) =>
    Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => from.charCodeAt(0) + i);
  const first = [0x20, ...range("a", "z"), ...range("A", "Z"), ...range("0", "9")];
  const punctuation = range("!", "~").filter((b) => !first.includes(b));
  const ranked = [...first, ...punctuation, 0x0a, 0x09];
  return [...ranked, ...Array.from({ length: BYTES }, (_, b) => b).filter((b) => !ranked.includes(b))];
}

/**
 * Pairs (i, j), i < left and j < right, in "shells" of growing max(i, j): all pairs of the
 * first k items come before any pair involving item k. Stops after `limit` pairs.
 */
function* shellPairs(left: number, right: number, limit: number): Generator<[number, number]> {
  let made = 0;
  for (let k = 0; k < Math.max(left, right); k++) {
    // (k, other) needs k < left and other < right; (other, k) needs other < left and k < right.
    const others = Math.min(k, Math.max(k < left ? right : 0, k < right ? left : 0));
    for (let other = 0; other <= others; other++) {
      const pairs: [number, number][] =
        other === k
          ? [[k, k]]
          : [
              [k, other],
              [other, k],
            ];
      for (const [i, j] of pairs) {
        if (i >= left || j >= right) continue;
        if (made++ >= limit) return;
        yield [i, j];
      }
    }
  }
}

export function byteBpeVocab(size: number): ByteBpeVocab {
  const fixed = BYTES + specialTokens.length;
  if (!Number.isSafeInteger(size) || size < fixed)
    throw new Error(`a byte-level vocabulary needs at least ${fixed} tokens, not ${size}`);
  const tokens = [...gpt2ByteChars, ...specialTokens];
  const merges: string[] = [];
  const ranked = bytesByRank().map((b) => gpt2ByteChars[b]!);
  // Tokens of the previous length, best first: single bytes to begin with.
  let previous = ranked;
  while (tokens.length < size) {
    const made: string[] = [];
    for (const [i, j] of shellPairs(previous.length, ranked.length, size - tokens.length)) {
      made.push(previous[i]! + ranked[j]!);
      merges.push(`${previous[i]!} ${ranked[j]!}`);
    }
    tokens.push(...made);
    previous = made;
  }
  const special = Object.fromEntries(specialTokens.map((t, i) => [t, BYTES + i])) as ByteBpeVocab["special"];
  return {
    tokens,
    tokenTypes: tokens.map((_, id) => (id >= BYTES && id < fixed ? tokenType.control : tokenType.normal)),
    merges,
    special,
  };
}
