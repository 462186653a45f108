/**
 * Turns generated tokens into text as it becomes final. A byte-level token can end
 * in the middle of a UTF-8 character; such tokens are held until the character is
 * complete (at most four bytes), so no replacement character is ever sent.
 */
export class TokenTextDecoder {
  private pending: number[] = [];
  private history: number[] = [];

  constructor(private readonly detokenize: (tokens: readonly number[], lastTokens: readonly number[]) => string) {}

  push(token: number): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.history);
    if (text.endsWith("\uFFFD") && this.pending.length < 4) return "";
    this.commit();
    return text;
  }

  /** Whatever is still held at the end of generation. */
  flush(): string {
    if (this.pending.length === 0) return "";
    const text = this.detokenize(this.pending, this.history);
    this.commit();
    return text;
  }

  private commit() {
    this.history = [...this.history, ...this.pending].slice(-8);
    this.pending = [];
  }
}
