import { gpt2ByteChars } from "./gpt2-bytes.js";

const byteOfChar = new Map(gpt2ByteChars.map((char, byte) => [char, byte]));
const utf8 = new TextEncoder();
const SENTENCEPIECE_BYTE = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * The bytes of a token as its GGUF vocabulary spells it (`tokenizer.ggml.tokens`), by the
 * vocabulary's `tokenizer.ggml.model`: a byte-level BPE ("gpt2") token in GPT-2's byte
 * characters; a SentencePiece ("llama") byte token as `<0xNN>`, another piece as its text with
 * `▁` for a space. Null where the spelling says nothing of the bytes (another kind of vocabulary,
 * or a character outside GPT-2's map).
 */
export function spelledBytes(spelled: string, tokenizerModel: string | undefined): number[] | null {
  if (tokenizerModel === "gpt2") {
    const bytes: number[] = [];
    for (const char of spelled) {
      const byte = byteOfChar.get(char);
      if (byte === undefined) return null;
      bytes.push(byte);
    }
    return bytes;
  }
  if (tokenizerModel === "llama") {
    const byte = SENTENCEPIECE_BYTE.exec(spelled);
    return byte ? [Number.parseInt(byte[1]!, 16)] : [...utf8.encode(spelled.replaceAll("\u2581", " "))];
  }
  return null;
}
