/**
 * How guardSampling hands a step's samplings to the batch sampler, with a recording stand-in
 * for the native calls (the real ones: batch-sampler.test.ts and sampling-guard.test.ts): the
 * samplings asked in one turn go as one call; one asking for probabilities goes alone; a sampler
 * asked twice starts a second batch after the first, never beside it; a failure ends only its
 * own sampling, and the native error is kept for its request.
 */
import type { LlamaContext } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { BATCH_FAILED, type BatchSampled, type SamplingBatches } from "../../../src/workers/engine/batch-sampler.js";
import { guardSampling, takeSamplingFailure } from "../../../src/workers/engine/sampling-guard.js";

interface Recorded {
  kind: "single" | "batch";
  indexes: number[];
  started: number;
  ended: number;
}

function setUp(answer: (indexes: number[]) => BatchSampled | Error = (indexes) => ok(indexes)) {
  const calls: Recorded[] = [];
  let clock = 0;
  let running = 0;
  let overlapped = false;
  const timed = async <T>(kind: Recorded["kind"], indexes: number[], value: () => T): Promise<T> => {
    const record: Recorded = { kind, indexes, started: clock++, ended: -1 };
    calls.push(record);
    if (++running > 1) overlapped = true;
    await new Promise((resolve) => setTimeout(resolve, 2));
    running--;
    record.ended = clock++;
    return value();
  };
  const native = {
    sampleToken: (index: number) => timed("single", [index], () => 1000 + index),
  };
  const context = { _ctx: native } as unknown as LlamaContext;
  const batches: SamplingBatches = {
    sampler: {
      sampleTokens: (_context, indexes) =>
        timed("batch", [...indexes], () => {
          const result = answer([...indexes]);
          if (result instanceof Error) throw result;
          return result;
        }),
    },
    threads: () => 1,
  };
  guardSampling(context, batches);
  const sample = (...args: unknown[]) => (native.sampleToken as (...a: unknown[]) => Promise<unknown>)(...args);
  return { calls, sample, context, overlapped: () => overlapped };
}

const ok = (indexes: number[]): BatchSampled => ({
  tokens: Int32Array.from(indexes, (i) => 1000 + i),
  errors: indexes.map(() => undefined),
});

describe("the samplings of a step, handed to the batch sampler", () => {
  it("go as one call when asked in one turn; one asking for probabilities goes alone, never beside it", async () => {
    const { calls, sample, overlapped } = setUp();
    const samplers = [{}, {}, {}];
    const tokens = await Promise.all([
      sample(0, samplers[0]),
      sample(1, samplers[1]),
      sample(2, {}, true, false),
      sample(3, samplers[2]),
    ]);
    expect(tokens).toEqual([1000, 1001, 1002, 1003]);
    expect(calls.map((c) => [c.kind, c.indexes])).toEqual([
      ["single", [2]],
      ["batch", [0, 1, 3]],
    ]);
    expect(overlapped()).toBe(false);
  });

  it("starts a second batch, after the first, when a sampler is asked twice", async () => {
    const { calls, sample, overlapped } = setUp();
    const a = {};
    const tokens = await Promise.all([sample(0, a), sample(1, {}), sample(2, a), sample(3, {})]);
    expect(tokens).toEqual([1000, 1001, 1002, 1003]);
    expect(calls.map((c) => c.indexes)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(calls[1]!.started).toBeGreaterThan(calls[0]!.ended);
    expect(overlapped()).toBe(false);
  });

  it("ends only a failed sampling, keeping its native error; a failed call ends the whole batch's", async () => {
    const failing = setUp((indexes) => ({
      tokens: Int32Array.from(indexes, (i) => (i === 1 ? BATCH_FAILED : 1000 + i)),
      errors: indexes.map((i) => (i === 1 ? "Unexpected empty grammar stack after accepting piece" : undefined)),
    }));
    expect(await Promise.all([failing.sample(0, {}), failing.sample(1, {}), failing.sample(2, {})])).toEqual([
      1000, -1, 1002,
    ]);
    expect(String(takeSamplingFailure(failing.context))).toContain("Unexpected empty grammar stack");
    expect(takeSamplingFailure(failing.context)).toBeUndefined();

    const broken = setUp(() => new Error("The context is disposed"));
    expect(await Promise.all([broken.sample(0, {}), broken.sample(1, {})])).toEqual([-1, -1]);
    expect(String(takeSamplingFailure(broken.context))).toContain("The context is disposed");
  });

  it("samples alone, with node-llama-cpp's own call, a step of one sequence", async () => {
    const { calls, sample } = setUp();
    expect(await sample(5, {})).toBe(1005);
    expect(calls.map((c) => [c.kind, c.indexes])).toEqual([["single", [5]]]);
  });
});
