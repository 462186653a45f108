/**
 * GPT-2's reversible byte-to-character map: printable Latin-1 bytes stand for
 * themselves, the other bytes for the code points from U+0100 on, in order. A byte-level
 * BPE vocabulary spells its tokens with these characters.
 */

function isPrintable(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
}

/** The 256 characters, indexed by byte value. */
export const gpt2ByteChars: readonly string[] = (() => {
  const chars: string[] = [];
  let extra = 0;
  for (let byte = 0; byte < 256; byte++) {
    chars.push(String.fromCodePoint(isPrintable(byte) ? byte : 256 + extra++));
  }
  return chars;
})();
