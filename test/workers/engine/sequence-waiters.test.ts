import type { LlamaContextSequence } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import type { TakenSequence } from "../../../src/workers/engine/prompt-cache.js";
import { SequenceWaiters, type Want } from "../../../src/workers/engine/sequence-waiters.js";

/** `free` stand-in sequences, handed out in order; `give` puts one back. */
function sequences(free: number) {
  let left = free;
  let next = 0;
  const takenFor: string[] = [];
  return {
    take(want: Want): TakenSequence | undefined {
      if (left === 0) return undefined;
      left--;
      takenFor.push(want.adapter ?? "base");
      return { sequence: { id: next++ } as unknown as LlamaContextSequence, reused: 0, ready: Promise.resolve() };
    },
    give() {
      left++;
    },
    takenFor,
  };
}

const want = (name: string): Want => ({ prompt: [], adapter: name, reuse: true });
const signal = () => new AbortController().signal;

describe("SequenceWaiters", () => {
  it("hands a free sequence at once and serves the waiting in arrival order, express ones first", async () => {
    const pool = sequences(1);
    const waiters = new SequenceWaiters((w) => pool.take(w));
    expect(await waiters.acquire(want("a"), signal(), false)).toBeDefined();
    const b = waiters.acquire(want("b"), signal(), false);
    const c = waiters.acquire(want("c"), signal(), false);
    const express = waiters.acquire(want("express"), signal(), true);
    for (let i = 0; i < 3; i++) {
      pool.give();
      waiters.serve();
    }
    await Promise.all([b, c, express]);
    expect(pool.takenFor).toEqual(["a", "express", "b", "c"]);
  });

  it("does not let a request pass others waiting in its queue, even with a sequence free", async () => {
    const pool = sequences(0);
    const waiters = new SequenceWaiters((w) => pool.take(w));
    const first = waiters.acquire(want("first"), signal(), false);
    pool.give();
    const second = waiters.acquire(want("second"), signal(), false);
    waiters.serve();
    await first;
    expect(pool.takenFor).toEqual(["first"]);
    pool.give();
    waiters.serve();
    await second;
    expect(pool.takenFor).toEqual(["first", "second"]);
  });

  it("drops a request whose signal aborts while it waits: it gets nothing, and the next one is served", async () => {
    const pool = sequences(0);
    const waiters = new SequenceWaiters((w) => pool.take(w));
    const cancel = new AbortController();
    const cancelled = waiters.acquire(want("cancelled"), cancel.signal, false);
    const kept = waiters.acquire(want("kept"), signal(), false);
    cancel.abort();
    expect(await cancelled).toBeUndefined();
    pool.give();
    waiters.serve();
    expect(await kept).toBeDefined();
    expect(pool.takenFor).toEqual(["kept"]);
  });
});
