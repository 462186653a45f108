import type { LlamaModel, Token } from "node-llama-cpp";
import { spelledBytes } from "../../models/formats/spelled-bytes.js";

/** Lead bytes whose second byte is narrower than 80–BF (UTF-8's table of well-formed sequences). */
export const NARROW_SECOND_BYTE: ReadonlyMap<number, readonly [number, number]> = new Map([
  [0xe0, [0xa0, 0xbf]],
  [0xed, [0x80, 0x9f]],
  [0xf0, [0x90, 0xbf]],
  [0xf4, [0x80, 0x8f]],
]);

export interface PieceShape {
  /** The piece's first byte when it continues a character (80–BF). */
  continuing: number | undefined;
  /** The lead byte the piece ends with, when it ends with one of NARROW_SECOND_BYTE's alone. */
  trailingLead: number | undefined;
}

/**
 * The shape of a piece that is UTF-8 but for a character cut at either end (up to three
 * continuation bytes first, a well-formed beginning of a character last), or undefined when it
 * has a NUL byte or anything else that is not UTF-8 (a stray byte, an overlong form, a
 * surrogate, past U+10FFFF, a missing continuation).
 */
export function pieceShape(bytes: Uint8Array): PieceShape | undefined {
  let i = 0;
  while (i < bytes.length && i < 3 && isContinuation(bytes[i]!)) i++;
  const continuing = i > 0 ? bytes[0] : undefined;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = characterLength(lead);
    if (length === 0) return undefined;
    const [low, high] = NARROW_SECOND_BYTE.get(lead) ?? [0x80, 0xbf];
    for (let k = 1; k < length; k++) {
      if (i + k >= bytes.length) {
        const alone = k === 1 && NARROW_SECOND_BYTE.has(lead);
        return { continuing, trailingLead: alone ? lead : undefined };
      }
      const next = bytes[i + k]!;
      if (k === 1 ? next < low || next > high : !isContinuation(next)) return undefined;
    }
    i += length;
  }
  return { continuing, trailingLead: undefined };
}

function isContinuation(byte: number): boolean {
  return byte >= 0x80 && byte <= 0xbf;
}

/** The bytes of the character a lead byte starts; 0 for NUL and where none starts (C0, C1, F5–FF, a continuation). */
function characterLength(lead: number): number {
  if (lead === 0) return 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Each token's piece as bytes, where they can be known. node-llama-cpp hands a piece over as a
 * JavaScript string, which stands for each byte that is not UTF-8 with U+FFFD. A piece whose
 * string has none is that string's UTF-8 (less a space that llama.cpp drops before punctuation
 * in a GPT-2 vocabulary's text, which changes nothing of its shape); for the others the bytes are read from the
 * vocabulary's spelling (spelled-bytes.ts) and kept only when they decode to the same string. Control tokens (whose text llama.cpp's
 * grammar reads but Hearth does not write) and pieces whose bytes stay unknown have none.
 */
export class TokenPieces {
  readonly count: number;
  private readonly vocabulary: readonly string[];
  private readonly tokenizerModel: string | undefined;
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  constructor(private readonly model: LlamaModel) {
    const tokenizer = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown; model?: unknown } } })
      .tokenizer?.ggml;
    if (!Array.isArray(tokenizer?.tokens)) throw new Error("the model's GGUF has no tokenizer.ggml.tokens");
    this.vocabulary = tokenizer.tokens as string[];
    this.count = this.vocabulary.length;
    this.tokenizerModel = typeof tokenizer.model === "string" ? tokenizer.model : undefined;
  }

  bytes(token: number): Uint8Array | undefined {
    const text = this.model.detokenize([token as Token], false);
    if (text !== this.model.detokenize([token as Token], true)) return undefined;
    if (!text.includes("\uFFFD")) return this.encoder.encode(text);
    const spelled = spelledBytes(this.vocabulary[token] ?? "", this.tokenizerModel);
    const bytes = spelled && Uint8Array.from(spelled);
    return bytes && this.decoder.decode(bytes) === text ? bytes : undefined;
  }
}
