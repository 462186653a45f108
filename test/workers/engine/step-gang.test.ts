import type { BatchItem } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { StepGang } from "../../../src/workers/engine/step-gang.js";

const item = (tokens: number): BatchItem => ({
  tokens: Array.from({ length: tokens }, (_, i) => i) as never,
  logits: Array.from({ length: tokens }, () => true),
  evaluationPriority: 5,
});

describe("StepGang", () => {
  it("waits with empty batches until every generating sequence has queued, generation steps first", () => {
    const gang = new StepGang();
    const strategy = gang.strategy();
    for (let i = 0; i < 3; i++) gang.enter();
    const prompt = item(40);
    const steps = [item(1), item(1)];
    expect(strategy({ items: [prompt, ...steps], size: 512 })).toEqual([
      { item: steps[0], processAmount: 1 },
      { item: steps[1], processAmount: 1 },
      { item: prompt, processAmount: 40 },
    ]);
    expect(strategy({ items: steps, size: 512 })).toEqual([]);
    gang.hold(); // a sequence holding its next token back is not waited for
    expect(strategy({ items: steps, size: 512 })).toHaveLength(2);
    gang.resume();
    gang.leave();
    expect(strategy({ items: steps, size: 512 })).toHaveLength(2);
  });

  it("gives up waiting after 64 empty batches in a row", () => {
    const gang = new StepGang();
    const strategy = gang.strategy((items) => items.slice(0, 1));
    gang.enter();
    gang.enter();
    const one = [item(1)];
    for (let i = 0; i < 64; i++) expect(strategy({ items: one, size: 512 })).toEqual([]);
    expect(strategy({ items: one, size: 512 })).toEqual([{ item: one[0], processAmount: 1 }]);
    expect(strategy({ items: one, size: 512 })).toEqual([]);
  });
});
