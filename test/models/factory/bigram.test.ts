import { describe, expect, it } from "vitest";
import { BYTE_VOCAB_SIZE, END_OF_TEXT, bigramLogProb, buildBigramTable } from "../../../src/models/factory/bigram.js";
import { bigramLora } from "../../../src/models/factory/bigram-lora.js";
import { argmaxFirst, createBigramOracle } from "../../helpers/bigram-oracle.js";
import { gpt2ByteChars } from "../../../src/models/formats/gpt2-bytes.js";
import { hearthTinyShape, oneHotNormGain } from "../../../src/models/factory/tiny-llama.js";

const V = BYTE_VOCAB_SIZE;
const row = (table: Float32Array, prev: number) => table.subarray(prev * V, (prev + 1) * V);

function logSumExp(values: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += Math.exp(values[i]! - max);
  return max + Math.log(sum);
}

describe("bigram table", () => {
  const text = "the cat sat on the mat. the end.";
  const table = buildBigramTable(text);

  it("has normalized rows", () => {
    for (let prev = 0; prev < V; prev++) expect(Math.abs(logSumExp(row(table, prev)))).toBeLessThan(1e-5);
  });

  it("follows the counts where the text has them", () => {
    expect(argmaxFirst(row(table, "t".charCodeAt(0)))).toBe("h".charCodeAt(0));
    expect(argmaxFirst(row(table, "h".charCodeAt(0)))).toBe("e".charCodeAt(0));
    expect(bigramLogProb(table, "h".charCodeAt(0), "e".charCodeAt(0))).toBeGreaterThan(Math.log(0.5));
  });

  it("falls back to the unigram distribution for unseen contexts", () => {
    expect(row(table, 0)).toEqual(row(table, 200));
    expect(row(table, 0)).toEqual(row(table, END_OF_TEXT));
    expect(argmaxFirst(row(table, 0))).toBe(" ".charCodeAt(0)); // the most common byte, never byte 0
  });

  it("makes end-of-text improbable", () => {
    for (const prev of [0, 46, 116, END_OF_TEXT])
      expect(bigramLogProb(table, prev, END_OF_TEXT)).toBeCloseTo(Math.log(1e-6), 4);
  });
});

describe("GPT-2 byte characters", () => {
  it("map the 256 bytes to distinct characters, printable ones to themselves", () => {
    expect(new Set(gpt2ByteChars).size).toBe(256);
    expect(gpt2ByteChars["A".charCodeAt(0)]).toBe("A");
    expect(gpt2ByteChars[0xe9]).toBe("é");
    expect(gpt2ByteChars[" ".charCodeAt(0)]).toBe("Ġ");
    expect(gpt2ByteChars["\n".charCodeAt(0)]).toBe("Ċ");
    expect(gpt2ByteChars[0]).toBe("Ā");
  });
});

describe("bigram oracle", () => {
  const table = buildBigramTable("abab abba cab dab\n");
  const shape = hearthTinyShape;
  const oracle = createBigramOracle({ table, shape });

  it("reproduces the table as logits, within float32 rounding", () => {
    for (const prev of [97, 98, 32, 0, END_OF_TEXT]) {
      const logits = oracle.logits(prev);
      for (let next = 0; next < V; next++) expect(logits[next]).toBeCloseTo(table[prev * V + next]!, 5);
    }
  });

  it("continues greedily from the last prompt byte", () => {
    const result = oracle.greedy("xa", 6);
    expect(result.text).toBe("bababa");
    expect(result.tokens).toEqual([98, 97, 98, 97, 98, 97]);
    expect(result.endedWithEndOfText).toBe(false);
    expect(oracle.greedy("", 1).tokens).toHaveLength(1);
  });

  it("breaks ties toward the lowest token id", () => {
    expect(argmaxFirst([1, 3, 3, 2])).toBe(1);
    expect(argmaxFirst([-Infinity, -5, -5])).toBe(1);
  });

  it("applies a LoRA as W + (alpha/rank)·B·A on the one-hot input", () => {
    const target = buildBigramTable("zzz yyy zzz yyy\n");
    const pair = bigramLora(table, target, shape, 4);
    const withLora = createBigramOracle({ table, shape, lora: { pair, alpha: 8 } });
    const g = oneHotNormGain(shape);
    for (const prev of [97, 32, 122]) {
      const base = oracle.logits(prev);
      const got = withLora.logits(prev);
      for (let next = 0; next < V; next++) {
        let ba = 0;
        for (let k = 0; k < 4; k++) ba += pair.b[next * 4 + k]! * pair.a[k * shape.embeddingLength + prev]!;
        expect(got[next]).toBeCloseTo(base[next]! + 2 * ba * g, 3);
      }
    }
  });

  it("moves greedy output toward the target table at full rank", () => {
    const target = buildBigramTable("zzz yyy zzz yyy\n");
    const pair = bigramLora(table, target, shape, V);
    const adapted = createBigramOracle({ table, shape, lora: { pair, alpha: V } });
    const direct = createBigramOracle({ table: target, shape });
    expect(adapted.greedy("z", 12).text).toBe(direct.greedy("z", 12).text);
  });
});
