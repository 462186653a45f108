/**
 * Finds stop strings in generated text that arrives piece by piece. Text that
 * could be the start of a stop string is held back until it is known not to be,
 * so a stop string never reaches the client, even split across tokens.
 */
export class StopMatcher {
  private held = "";
  private readonly stops: { text: string; failure: Int32Array }[];

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0).map((text) => ({ text, failure: failureTable(text) }));
  }

  /** Adds text; returns what may be sent now and whether a stop string was hit. */
  push(text: string): { text: string; stopped: boolean } {
    if (this.stops.length === 0) return { text, stopped: false };
    const buffer = this.held + text;
    let cut = -1;
    for (const { text: stop } of this.stops) {
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

  /**
   * Length of the longest suffix of `buffer` that is a proper prefix of a stop string: the
   * Knuth–Morris–Pratt automaton of each stop run over the buffer's last characters, so a
   * token costs time linear in the stop strings' length (they are bounded by MAX_STOP_CHARS).
   */
  private longestPendingPrefix(buffer: string): number {
    let best = 0;
    for (const { text: stop, failure } of this.stops) {
      let state = 0;
      for (let i = Math.max(0, buffer.length - (stop.length - 1)); i < buffer.length; i++) {
        const ch = buffer.charCodeAt(i);
        while (state > 0 && stop.charCodeAt(state) !== ch) state = failure[state - 1]!;
        if (stop.charCodeAt(state) === ch) state++;
        // A whole match would have been cut above; step back to keep the prefix proper.
        if (state === stop.length) state = failure[state - 1]!;
      }
      if (state > best) best = state;
    }
    return best;
  }
}

/** KMP's table: for each prefix of `text`, the length of its longest proper border. */
function failureTable(text: string): Int32Array {
  const failure = new Int32Array(text.length);
  let k = 0;
  for (let i = 1; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== text.charCodeAt(k)) k = failure[k - 1]!;
    if (text.charCodeAt(i) === text.charCodeAt(k)) k++;
    failure[i] = k;
  }
  return failure;
}
