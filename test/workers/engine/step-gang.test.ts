import type { BatchItem } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { EXPRESS_PRIORITY, OTHER_PRIORITY, StepGang } from "../../../src/workers/engine/step-gang.js";

const item = (tokens: number, evaluationPriority = OTHER_PRIORITY): BatchItem => ({
  tokens: Array.from({ length: tokens }, (_, i) => i) as never,
  logits: Array.from({ length: tokens }, () => true),
  evaluationPriority,
});

/** A gang with `generating` sequences entered, and its strategy (picking everything queued). */
function gangOf(generating: number) {
  const gang = new StepGang();
  for (let i = 0; i < generating; i++) gang.enter();
  return { gang, strategy: gang.strategy() };
}

describe("StepGang", () => {
  it("waits with empty batches until every generating sequence has queued, generation steps first", () => {
    const { gang, strategy } = gangOf(3);
    const prompt = item(40);
    const steps = [item(1), item(1)];
    expect(strategy({ items: [prompt, ...steps], size: 512 })).toEqual([
      { item: steps[0], processAmount: 1 },
      { item: steps[1], processAmount: 1 },
      { item: prompt, processAmount: 40 },
    ]);
    expect(strategy({ items: steps, size: 512 })).toEqual([]);
    gang.leave();
    expect(strategy({ items: steps, size: 512 })).toHaveLength(2);
  });

  it("gives up waiting after 64 empty batches in a row", () => {
    const gang = new StepGang();
    const strategy = gang.strategy({ pick: (items) => items.slice(0, 1) });
    gang.enter();
    gang.enter();
    const one = [item(1)];
    for (let i = 0; i < 64; i++) expect(strategy({ items: one, size: 512 })).toEqual([]);
    expect(strategy({ items: one, size: 512 })).toEqual([{ item: one[0], processAmount: 1 }]);
    expect(strategy({ items: one, size: 512 })).toEqual([]);
  });

  it("sends an express request's prompt at once in a batch of its own, then its steps with everybody's", () => {
    const { strategy } = gangOf(4);
    const express = item(40, EXPRESS_PRIORITY);
    const steps = [item(1), item(1)];
    // Two of the three other generating sequences have queued their step: no waiting for the third.
    expect(strategy({ items: [...steps, express], size: 512 })).toEqual([{ item: express, processAmount: 40 }]);
    // The batch after an express one is ordinary.
    expect(strategy({ items: [...steps, item(1), item(1)], size: 512 })).toHaveLength(4);
    // Its next tokens are steps like the others', and wait for the gang as theirs do.
    const expressStep = item(1, EXPRESS_PRIORITY);
    expect(strategy({ items: [...steps, expressStep], size: 512 })).toEqual([]);
    const all = [...steps, item(1), expressStep];
    expect(strategy({ items: all, size: 512 })).toHaveLength(4);
  });

  it("keeps to the picker's choice: an express prompt it leaves out waits", () => {
    const gang = new StepGang();
    const express = item(40, EXPRESS_PRIORITY);
    const other = item(1);
    const strategy = gang.strategy({ pick: (items) => items.filter((i) => i !== express) });
    gang.enter();
    gang.enter();
    expect(strategy({ items: [other, express], size: 512 })).toEqual([{ item: other, processAmount: 1 }]);
  });

  it("gives a prompt longer than a batch turns: its own batch, then an ordinary one, and again", () => {
    const { strategy } = gangOf(3);
    const express = item(2000, EXPRESS_PRIORITY);
    const steps = [item(1), item(1)];
    const items = [...steps, express];
    expect(strategy({ items, size: 512 })).toEqual([{ item: express, processAmount: 2000 }]);
    // The ordinary batch after it waits for the gang as always (a sequence's step missing).
    expect(strategy({ items: [steps[0]!, express], size: 512 })).toEqual([]);
    // The steps first, then what room the batch has left.
    expect(strategy({ items, size: 512 })).toEqual([
      { item: steps[0], processAmount: 1 },
      { item: steps[1], processAmount: 1 },
      { item: express, processAmount: 510 },
    ]);
    expect(strategy({ items, size: 512 })).toEqual([{ item: express, processAmount: 2000 }]);
  });

  it("gives prompts the room the steps leave, in the order they were queued", () => {
    const { strategy } = gangOf(2);
    const [first, second] = [item(300), item(300)];
    const steps = [item(1), item(1)];
    expect(strategy({ items: [first, ...steps, second], size: 512 })).toEqual([
      { item: steps[0], processAmount: 1 },
      { item: steps[1], processAmount: 1 },
      { item: first, processAmount: 300 },
      { item: second, processAmount: 210 },
    ]);
    // More steps than the batch holds: the first `size` of them, no prompt.
    const many = Array.from({ length: 5 }, () => item(1));
    expect(strategy({ items: [first, ...many], size: 4 })).toEqual(
      many.slice(0, 4).map((step) => ({ item: step, processAmount: 1 })),
    );
  });

  it("puts a batch in sequence ID order, so that llama.cpp decodes consecutive IDs in one pass", () => {
    const gang = new StepGang();
    for (let i = 0; i < 4; i++) gang.enter();
    const prompt = item(40);
    const steps = [item(1), item(1), item(1), item(1)];
    const queued = [prompt, steps[0]!, steps[1]!, steps[2]!, steps[3]!];
    // The order their decodes were queued in: as the samplings of the last step came back.
    const ids = new Map([prompt, steps[0], steps[1], steps[2], steps[3]].map((it, i) => [it, [2, 3, 0, 4, 1][i]!]));
    const strategy = gang.strategy({ ids: (items) => items.map((it) => ids.get(it)!) });
    const batch = strategy({ items: queued, size: 512 });
    expect(batch.map(({ item }) => ids.get(item))).toEqual([0, 1, 2, 3, 4]);
    expect(batch.find(({ item }) => item === prompt)?.processAmount).toBe(40);
  });
});
