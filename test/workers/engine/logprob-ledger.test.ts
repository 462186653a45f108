import { describe, expect, it } from "vitest";
import { LogprobLedger } from "../../../src/workers/engine/logprob-ledger.js";
import { StopMatcher } from "../../../src/workers/stop-matcher.js";

const entry = (token: string) => ({ token, bytes: null, logprob: -1, top: [] });

/**
 * Feeds tokens (their decoded text: "" while a character is incomplete) through a stop matcher
 * as the engine does, and returns what each send carried.
 */
function feed(stops: string[], tokens: { name: string; text: string }[]) {
  const ledger = new LogprobLedger();
  const matcher = new StopMatcher(stops);
  const sends: { text: string; tokens: string[] }[] = [];
  const send = (text: string) => {
    const out = ledger.sent(text);
    if (text || out.length) sends.push({ text, tokens: out.map((e) => `${e.token}@${e.offset}`) });
  };
  let stopped = false;
  for (const { name, text } of tokens) {
    ledger.token(entry(name));
    ledger.decoded(text);
    const out = matcher.push(text);
    send(out.text);
    if ((stopped = out.stopped)) break;
  }
  if (!stopped) send(matcher.flush());
  const last = ledger.finish();
  if (last.length) sends.push({ text: "", tokens: last.map((e) => `${e.token}@${e.offset}`) });
  return sends;
}

describe("LogprobLedger", () => {
  it("gives each token out with its text", () => {
    expect(
      feed(
        [],
        [
          { name: "a", text: "a" },
          { name: "bc", text: "bc" },
        ],
      ),
    ).toEqual([
      { text: "a", tokens: ["a@0"] },
      { text: "bc", tokens: ["bc@1"] },
    ]);
  });

  it("holds the bytes of a character until it is whole, all at its offset", () => {
    expect(
      feed(
        [],
        [
          { name: "x", text: "x" },
          { name: "\\xc3", text: "" },
          { name: "\\xa9", text: "é" },
          { name: "😀", text: "😀" },
          { name: "!", text: "!" },
        ],
      ),
    ).toEqual([
      { text: "x", tokens: ["x@0"] },
      { text: "é", tokens: ["\\xc3@1", "\\xa9@1"] },
      { text: "😀", tokens: ["😀@2"] },
      { text: "!", tokens: ["!@3"] },
    ]);
  });

  it("holds a token whose text may start a stop string, and gives it out once that text goes", () => {
    expect(
      feed(
        ["END"],
        [
          { name: "aE", text: "aE" },
          { name: "x", text: "x" },
        ],
      ),
    ).toEqual([
      { text: "a", tokens: [] },
      { text: "Ex", tokens: ["aE@0", "x@2"] },
    ]);
  });

  it("never gives out a token wholly inside the stop string, and gives out in full one it cuts", () => {
    expect(
      feed(
        ["END"],
        [
          { name: "ok", text: "ok" },
          { name: "E", text: "E" },
          { name: "ND", text: "ND" },
        ],
      ),
    ).toEqual([{ text: "ok", tokens: ["ok@0"] }]);
    expect(
      feed(
        ["END"],
        [
          { name: "ok", text: "ok" },
          { name: "xEN", text: "xEN" },
          { name: "D", text: "D" },
        ],
      ),
    ).toEqual([
      { text: "ok", tokens: ["ok@0"] },
      { text: "x", tokens: [] },
      { text: "", tokens: ["xEN@2"] },
    ]);
  });

  it("gives out a held stop prefix's tokens when generation ends without the stop", () => {
    expect(
      feed(
        ["END"],
        [
          { name: "a", text: "a" },
          { name: "EN", text: "EN" },
        ],
      ),
    ).toEqual([
      { text: "a", tokens: ["a@0"] },
      { text: "EN", tokens: ["EN@1"] },
    ]);
  });
});
