import type { TokenLogprob } from "../../domain/logprobs.js";

/** Unicode code points: what logprobs' offsets count (as OpenAI's, Python's string indices). */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Lines generated tokens up with the text actually sent, for their logprobs. A token's text
 * passes two holds on its way out: the UTF-8 decoder keeps a token that is part of a
 * character until the character is whole, and the stop matcher keeps text that may begin a
 * stop string until it is known not to. A token is given out once all its text has been sent
 * (so its logprob never runs ahead of its text); when a stop string ends the generation, a
 * token it cuts through (part of its text was sent) is given out in full, and a token wholly
 * inside the stop string never is.
 */
export class LogprobLedger {
  /** Tokens whose text the decoder still holds. */
  private unplaced: Omit<TokenLogprob, "offset">[] = [];
  /** Tokens whose text is known, with where it ends, not all sent yet. */
  private placed: { entry: TokenLogprob; end: number }[] = [];
  private decodedLength = 0;
  private sentLength = 0;

  /** A generated token, before its text is decoded. */
  token(entry: Omit<TokenLogprob, "offset">): void {
    this.unplaced.push(entry);
  }

  /** The decoder's text for the tokens given since it last had text ("" while it holds a partial character). */
  decoded(text: string): void {
    if (text === "") return;
    const offset = this.decodedLength;
    this.decodedLength += codePoints(text);
    for (const entry of this.unplaced) this.placed.push({ entry: { ...entry, offset }, end: this.decodedLength });
    this.unplaced = [];
  }

  /** Text sent to the client; returns the tokens whose text is now all sent. */
  sent(text: string): TokenLogprob[] {
    this.sentLength += codePoints(text);
    let done = 0;
    while (done < this.placed.length && this.placed[done]!.end <= this.sentLength) done++;
    return this.placed.splice(0, done).map((p) => p.entry);
  }

  /**
   * Generation is over: the tokens a stop string cut through (some of their text was sent), and
   * tokens with no text of their own at the end of an uncut text.
   */
  finish(): TokenLogprob[] {
    const cut = this.placed.filter((p) => p.entry.offset < this.sentLength).map((p) => p.entry);
    const whole = this.sentLength === this.decodedLength && this.placed.length === 0;
    const textless = whole ? this.unplaced.map((entry) => ({ ...entry, offset: this.decodedLength })) : [];
    this.placed = [];
    this.unplaced = [];
    return [...cut, ...textless];
  }
}
