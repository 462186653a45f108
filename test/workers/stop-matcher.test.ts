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
  it("gives up holding after four tokens", () => {
    const d = new TokenTextDecoder(detok);
    const out = [0xff, 0xff, 0xff, 0xff].map((b) => d.push(b)).join("");
    expect(out).toContain("\uFFFD");
  });
});
