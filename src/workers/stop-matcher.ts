/**
 * Finds stop strings in generated text that arrives piece by piece. Text that
 * could be the start of a stop string is held back until it is known not to be,
 * so a stop string never reaches the client, even split across tokens.
 */
export class StopMatcher {
  private held = "";
  private readonly stops: string[];

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  /** Adds text; returns what may be sent now and whether a stop string was hit. */
  push(text: string): { text: string; stopped: boolean } {
    if (this.stops.length === 0) return { text, stopped: false };
    const buffer = this.held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      this.held = "";
      return { text: buffer.slice(0, cut), stopped: true };
    }
    const keep = this.longestPendingPrefix(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** The text held back, once generation has ended without a stop string. */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of a stop string. */
  private longestPendingPrefix(buffer: string): number {
    let best = 0;
    for (const stop of this.stops) {
      const max = Math.min(stop.length - 1, buffer.length);
      for (let len = max; len > best; len--) {
        if (buffer.endsWith(stop.slice(0, len))) {
          best = len;
          break;
        }
      }
    }
    return best;
  }
}
