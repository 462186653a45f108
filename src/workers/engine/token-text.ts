/** Tokens held at most while each goes on with a character the one before left cut. */
const MAX_HELD = 32;
/** Tokens before the held ones that their text is read after. */
const HISTORY = 8;

/**
 * Turns generated tokens into text as it becomes final. A byte-level token can end
 * in the middle of a UTF-8 character; such tokens are held until the character is
 * complete (at most four bytes), so no replacement character is ever sent. A run of
 * tokens that each complete a character and begin the next (E1 | 80 80 E1 | 80 80 E1…,
 * which a byte-level vocabulary of multi-byte tokens can write) is held until it ends;
 * bytes that can never be whole (FF) go out as U+FFFD after four tokens.
 *
 * Tokens are read after the ones before them (`after` first: a generation's prompt), as the
 * text goes on: SentencePiece's detokenizer drops the leading space of a text's first piece only.
 */
export class TokenTextDecoder {
  private pending: number[] = [];
  private history: number[];

  constructor(
    private readonly detokenize: (tokens: readonly number[], lastTokens: readonly number[]) => string,
    after: readonly number[] = [],
  ) {
    this.history = after.slice(-HISTORY);
  }

  push(token: number): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.history);
    if (text.endsWith("\uFFFD") && this.mayComplete(token)) return "";
    this.commit();
    return text;
  }

  /** The text of `tokens` all at once: what pushing each of them and flushing gives. */
  text(tokens: readonly number[]): string {
    let text = "";
    for (const token of tokens) text += this.push(token);
    return text + this.flush();
  }

  /** Whatever is still held at the end of generation. */
  flush(): string {
    if (this.pending.length === 0) return "";
    const text = this.detokenize(this.pending, this.history);
    this.commit();
    return text;
  }

  /** Whether the held text's cut character may still be completed by the next token. */
  private mayComplete(last: number): boolean {
    if (this.pending.length < 4) return true;
    if (this.pending.length >= MAX_HELD) return false;
    // Still a run if the last token completed a character the tokens before it cut: together
    // they have fewer replacement characters than apart. All the held tokens before it, not the
    // one before alone: single bytes F0 | 9F | 98 and then 80 C3 complete 😀 and begin é, while
    // 98 and 80 C3 alone are all replacement characters either way.
    const before = this.pending.slice(0, -1);
    const apart = replacements(this.detokenize(before, [])) + replacements(this.detokenize([last], []));
    return replacements(this.detokenize(this.pending, [])) < apart;
  }

  private commit() {
    this.history = [...this.history, ...this.pending].slice(-HISTORY);
    this.pending = [];
  }
}

function replacements(text: string): number {
  let n = 0;
  for (const char of text) if (char === "\uFFFD") n++;
  return n;
}
