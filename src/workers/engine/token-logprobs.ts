import type { LlamaModel, Token } from "node-llama-cpp";
import { logprobOf, type LogprobToken, type TokenLogprob } from "../../domain/logprobs.js";
import { spelledBytes } from "../../models/formats/spelled-bytes.js";

type Piece = Omit<LogprobToken, "logprob">;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A model's tokens as logprobs show them: each token's text and bytes (worked out once per
 * token), and a sampled position's entry from node-llama-cpp's probabilities (a map sorted
 * from the most likely token down).
 *
 * A token's bytes are its text's UTF-8, except for a token that is part of a UTF-8 character
 * (a byte-level token): its text is then not whole characters, and its bytes come from the
 * model's vocabulary, which spells them GPT-2's way (byte-level BPE) or as `<0xNN>`
 * (SentencePiece's byte fallback); another kind of vocabulary gives null bytes for such a token.
 * A token's text is read after another token's, as it stands within a text: SentencePiece's
 * detokenizer drops the leading space of a text's first piece (`▁the` alone reads "the").
 */
export class TokenLogprobs {
  private readonly pieces = new Map<number, Piece>();
  private readonly vocabulary: readonly string[] | undefined;
  private readonly spelling: string | undefined;
  /** The token (the BOS, else the EOS) each token is detokenized after; its own text is then taken off. */
  private readonly before: Token[];

  constructor(private readonly model: LlamaModel) {
    const anchor = model.tokens.bos ?? model.tokens.eos;
    this.before = anchor === null ? [] : [anchor];
    const tokenizer = model.fileInfo.metadata?.tokenizer?.ggml;
    this.vocabulary = Array.isArray(tokenizer?.tokens) ? (tokenizer.tokens as string[]) : undefined;
    this.spelling = typeof tokenizer?.model === "string" ? tokenizer.model : undefined;
  }

  /** The entry of a sampled token: its log probability and the `top` most likely tokens there. */
  entry(token: number, probabilities: ReadonlyMap<Token, number>, top: number): Omit<TokenLogprob, "offset"> {
    const alternatives: LogprobToken[] = [];
    for (const [alternative, probability] of probabilities) {
      if (alternatives.length >= top) break;
      alternatives.push({ ...this.piece(alternative), logprob: logprobOf(probability) });
    }
    return { ...this.piece(token), logprob: logprobOf(probabilities.get(token as Token) ?? 0), top: alternatives };
  }

  piece(token: number): Piece {
    let piece = this.pieces.get(token);
    if (piece === undefined) {
      piece = this.read(token);
      this.pieces.set(token, piece);
    }
    return piece;
  }

  private read(token: number): Piece {
    const text = this.model.detokenize([token as Token], true, this.before);
    if (!text.includes("\uFFFD")) return { token: text, bytes: [...utf8.encode(text)] };
    const spelled = this.vocabulary?.[token];
    const bytes = spelled === undefined ? null : spelledBytes(spelled, this.spelling);
    return bytes === null ? { token: text, bytes: null } : { token: escapeBytes(bytes), bytes };
  }
}

/** Bytes as text: whole UTF-8 characters as themselves, any other byte as `\xNN`. */
export function escapeBytes(bytes: readonly number[]): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes[i]!);
    const char = length > 0 ? decodeStrict(bytes.slice(i, i + length)) : undefined;
    if (char !== undefined) {
      out += char;
      i += length;
    } else {
      out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`;
      i++;
    }
  }
  return out;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

function decodeStrict(bytes: readonly number[]): string | undefined {
  try {
    return strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
