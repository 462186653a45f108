import fc from "fast-check";
import type { BatchItem, LlamaContext } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { queuedSequenceIds, stepPasses } from "../../../src/workers/engine/sequence-ids.js";

const item = (tokens: number[]): BatchItem => ({
  tokens: tokens as never,
  logits: tokens.map(() => true),
  evaluationPriority: 5,
});

describe("stepPasses", () => {
  it("counts llama.cpp's passes over a step: one per break in the IDs, in the batch's order", () => {
    expect(stepPasses([])).toBe(0);
    expect(stepPasses([3])).toBe(1);
    expect(stepPasses([0, 1, 2, 3])).toBe(1);
    // A pass reads on through the batch for the next ID: 1 after 2 starts another, 3 rides with 2.
    expect(stepPasses([0, 2, 1, 3])).toBe(2);
    expect(stepPasses([3, 2, 1, 0])).toBe(4);
    // Apart: a pass each, whatever the order.
    expect(stepPasses([0, 2, 4])).toBe(3);
    expect(stepPasses([5, 6, 0, 1])).toBe(2);
  });

  it("in ID order, is the number of runs of consecutive IDs", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 64 }), (ids) => {
        const sorted = [...ids].sort((a, b) => a - b);
        const runs = sorted.filter((id, i) => i === 0 || id !== sorted[i - 1]! + 1).length;
        expect(stepPasses(sorted)).toBe(runs);
        // No order takes fewer.
        expect(stepPasses(ids)).toBeGreaterThanOrEqual(runs);
      }),
    );
  });
});

describe("queuedSequenceIds", () => {
  it("reads each item's sequence from node-llama-cpp's queued decodes, and refuses items that do not match", () => {
    const a = item([1]);
    const b = item([2, 3]);
    const context = {
      _queuedDecodes: [
        { sequenceId: 4, tokens: a.tokens },
        { sequenceId: 1, tokens: b.tokens },
      ],
    };
    expect(queuedSequenceIds(context as unknown as LlamaContext, [a, b])).toEqual([4, 1]);
    expect(() => queuedSequenceIds(context as unknown as LlamaContext, [b, a])).toThrow(/needs updating/);
    expect(() => queuedSequenceIds(context as unknown as LlamaContext, [a])).toThrow(/needs updating/);
    expect(() => queuedSequenceIds(undefined, [a])).toThrow(/needs updating/);
  });
});
