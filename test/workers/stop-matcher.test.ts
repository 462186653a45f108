import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StopMatcher } from "../../src/workers/stop-matcher.js";
import { TokenTextDecoder } from "../../src/workers/engine/token-text.js";

function feed(stops: string[], pieces: string[]) {
  const m = new StopMatcher(stops);
  let out = "";
  for (const piece of pieces) {
    const r = m.push(piece);
    out += r.text;
    if (r.stopped) return { out, stopped: true };
  }
  return { out: out + m.flush(), stopped: false };
}

describe("StopMatcher", () => {
  it("passes text through when there are no stops", () => {
    expect(feed([], ["a", "b"])).toEqual({ out: "ab", stopped: false });
  });
  it("cuts before a stop string split across pieces", () => {
    expect(feed(["\nUser:"], ["Hi", " there\nU", "se", "r: more"])).toEqual({ out: "Hi there", stopped: true });
  });
  it("releases held text that turns out not to be a stop", () => {
    const m = new StopMatcher(["END"]);
    expect(m.push("the E")).toEqual({ text: "the ", stopped: false });
    expect(m.push("ND")).toEqual({ text: "", stopped: true });
    const n = new StopMatcher(["END"]);
    expect(n.push("the E")).toEqual({ text: "the ", stopped: false });
    expect(n.push("x")).toEqual({ text: "Ex", stopped: false });
  });
  it("uses the earliest of several stops", () => {
    expect(feed(["c", "b"], ["abc"])).toEqual({ out: "a", stopped: true });
  });
  it("flushes a held prefix at the end", () => {
    expect(feed(["END"], ["x E"])).toEqual({ out: "x E", stopped: false });
  });

  it("agrees with the obvious reference on any text, stops and split (fast-check)", () => {
    // The reference: after each piece, everything up to the first stop is known; of the text
    // before it, all is sent except the longest tail that could still begin a stop string.
    const pending = (text: string, stops: string[]) => {
      let keep = 0;
      for (const stop of stops)
        for (let len = Math.min(stop.length - 1, text.length); len > keep; len--)
          if (text.endsWith(stop.slice(0, len))) keep = len;
      return keep;
    };
    const alphabet = fc.constantFrom("a", "b", "c", "é", "\n");
    const word = (min: number, max: number) =>
      fc.array(alphabet, { minLength: min, maxLength: max }).map((a) => a.join(""));
    fc.assert(
      fc.property(fc.array(word(1, 6), { maxLength: 4 }), fc.array(word(0, 5), { maxLength: 12 }), (stops, pieces) => {
        const matcher = new StopMatcher(stops);
        let sent = "";
        let whole = "";
        for (const piece of pieces) {
          whole += piece;
          const result = matcher.push(piece);
          sent += result.text;
          const cuts = stops.map((s) => whole.indexOf(s)).filter((at) => at !== -1);
          if (cuts.length > 0) {
            expect(result.stopped).toBe(true);
            expect(sent).toBe(whole.slice(0, Math.min(...cuts)));
            return;
          }
          expect(result.stopped).toBe(false);
          expect(sent).toBe(whole.slice(0, whole.length - pending(whole, stops)));
        }
        expect(sent + matcher.flush()).toBe(whole);
      }),
      { numRuns: 2000 },
    );
  });

  it("holds back a 256-character stop's prefix over 4000 tokens and cuts at its end", () => {
    // (The quadratic search took ~32k comparisons a token for such a stop; KMP takes ~500.)
    const stop = `${"a".repeat(255)}b`;
    const matcher = new StopMatcher([stop, stop.replace("b", "c"), stop.replace("b", "d"), stop.replace("b", "e")]);
    let sent = "";
    for (let i = 0; i < 4000; i++) sent += matcher.push("a").text;
    expect(sent).toBe("a".repeat(4000 - 255));
    expect(matcher.push("b")).toEqual({ text: "", stopped: true });
  });
});

describe("TokenTextDecoder", () => {
  // Byte-level tokens: token id = byte.
  const detok = (tokens: readonly number[]) => Buffer.from(tokens).toString("utf8");
  it("holds incomplete UTF-8 characters until they are whole", () => {
    const d = new TokenTextDecoder(detok);
    const bytes = [...Buffer.from("café €", "utf8")];
    const pieces = bytes.map((b) => d.push(b));
    expect(pieces.join("") + d.flush()).toBe("café €");
    expect(pieces.some((p) => p.includes("\uFFFD"))).toBe(false);
  });
  it("holds a run of tokens that each complete a character and begin the next", () => {
    // Multi-byte tokens: 1 = "a" E1, 2 = 80 80 E1, 3 = 80 80 "b".
    const table: Record<number, number[]> = { 1: [0x61, 0xe1], 2: [0x80, 0x80, 0xe1], 3: [0x80, 0x80, 0x62] };
    const d = new TokenTextDecoder((tokens) => Buffer.from(tokens.flatMap((t) => table[t]!)).toString("utf8"));
    const pieces = [1, 2, 2, 2, 2, 2, 3].map((t) => d.push(t));
    expect(pieces.join("") + d.flush()).toBe(`a${"\u1000".repeat(6)}b`);
    expect(pieces.some((p) => p.includes("\uFFFD"))).toBe(false);
  });
  it("holds a character begun by a fourth token that completes the one of three single bytes", () => {
    // The structured-output fuzz's seed 237144472 on the bench vocabulary: F0 | 9F | 98 | 80 C3 | A9 22.
    const table: Record<number, number[]> = { 1: [0xf0], 2: [0x9f], 3: [0x98], 4: [0x80, 0xc3], 5: [0xa9, 0x22] };
    const d = new TokenTextDecoder((tokens) => Buffer.from(tokens.flatMap((t) => table[t]!)).toString("utf8"));
    const pieces = [1, 2, 3, 4, 5].map((t) => d.push(t));
    expect(pieces.join("") + d.flush()).toBe('😀é"');
    expect(pieces.some((p) => p.includes("\uFFFD"))).toBe(false);
  });
  it("gives up holding after four tokens", () => {
    const d = new TokenTextDecoder(detok);
    const out = [0xff, 0xff, 0xff, 0xff].map((b) => d.push(b)).join("");
    expect(out).toContain("\uFFFD");
  });
});
