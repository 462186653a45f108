import { gguf, tokenType, type GgufValue } from "../formats/gguf-types.js";

/**
 * A small SentencePiece vocabulary in the words of a GGUF file, laid out as llama.cpp's
 * converter writes a Llama 2 one (`tokenizer.ggml.model` "llama"): `<unk>`, `<s>` (BOS, put
 * first), `</s>` (EOS), the 256 byte-fallback tokens `<0x00>`…`<0xFF>` (a character with no
 * piece of its own becomes its UTF-8 bytes), then the pieces, `▁` standing for a space (the
 * tokenizer puts one before the text, and the detokenizer takes it off the first token).
 *
 * The pieces are the alphabet's characters, then each word with every prefix of it, so
 * llama.cpp's tokenizer, which merges neighbouring pieces while the merge is a piece (the
 * higher score first), can reach the whole word. A piece listed earlier scores higher.
 */

export const SPM_SPACE = "\u2581";

const specials = [
  ["<unk>", tokenType.unknown],
  ["<s>", tokenType.control],
  ["</s>", tokenType.control],
] as const;

export interface SentencePieceVocab {
  tokens: string[];
  /** What a GGUF needs of it: the `tokenizer.*` metadata. */
  metadata: Record<string, GgufValue>;
  /** `<unk>`, `<s>`, `</s>`. */
  specialIds: number[];
  /** The id of a token by its spelling; an Error for a token it does not have. */
  id(token: string): number;
}

/** `alphabet`: the characters with a piece (`▁` among them); `words`: the longer pieces, each with its prefixes. */
export function sentencePieceVocab(alphabet: readonly string[], words: readonly string[]): SentencePieceVocab {
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
  const prefixes = words.flatMap((word) => [...word].slice(1).map((_, i) => [...word].slice(0, i + 2).join("")));
  const pieces = [...new Set([...alphabet, ...prefixes])];
  const tokens = [...specials.map(([token]) => token), ...bytes, ...pieces];
  const tokenTypes = [
    ...specials.map(([, type]) => type),
    ...bytes.map(() => tokenType.byte),
    ...pieces.map(() => tokenType.normal),
  ];
  const scores = [...specials.map(() => 0), ...bytes.map(() => 0), ...pieces.map((_, i) => -i)];
  const ids = new Map(tokens.map((token, i) => [token, i]));
  if (ids.size !== tokens.length) throw new Error("a SentencePiece vocabulary has a piece twice");
  const id = (token: string) => {
    const found = ids.get(token);
    if (found === undefined) throw new Error(`the vocabulary has no token ${JSON.stringify(token)}`);
    return found;
  };
  return {
    tokens,
    metadata: {
      "tokenizer.ggml.model": gguf.str("llama"),
      "tokenizer.ggml.tokens": gguf.strings(tokens),
      "tokenizer.ggml.scores": gguf.f32s(scores),
      "tokenizer.ggml.token_type": gguf.i32s(tokenTypes),
      "tokenizer.ggml.unknown_token_id": gguf.u32(id("<unk>")),
      "tokenizer.ggml.bos_token_id": gguf.u32(id("<s>")),
      "tokenizer.ggml.eos_token_id": gguf.u32(id("</s>")),
      "tokenizer.ggml.add_bos_token": gguf.bool(true),
      "tokenizer.ggml.add_eos_token": gguf.bool(false),
      "tokenizer.ggml.add_space_prefix": gguf.bool(true),
    },
    specialIds: specials.map(([token]) => id(token)),
    id,
  };
}
