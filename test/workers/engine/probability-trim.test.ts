import { describe, expect, it } from "vitest";
import { MAX_TOP_LOGPROBS } from "../../../src/domain/logprobs.js";
import { trimmingProbabilities, trimProbabilities } from "../../../src/workers/engine/probability-trim.js";
import type { NativeSampler } from "../../../src/workers/engine/sample-hooks.js";

/** (token, probability) pairs for tokens 100, 99, … most likely first. */
const pairs = (n: number) => Array.from({ length: n }, (_, i) => [100 - i, (n - i) / 1000]).flat();

describe("trimProbabilities", () => {
  it("keeps the top MAX_TOP_LOGPROBS pairs, in order", () => {
    const all = pairs(60);
    expect(trimProbabilities(all, 95)).toEqual(all.slice(0, 2 * MAX_TOP_LOGPROBS));
  });

  it("adds the sampled token's pair when it is further down", () => {
    const all = pairs(60);
    const trimmed = trimProbabilities(all, 100 - 50);
    expect(trimmed).toHaveLength(2 * MAX_TOP_LOGPROBS + 2);
    expect(trimmed.slice(-2)).toEqual([50, 10 / 1000]);
  });

  it("leaves a short list whole, and a token not listed out", () => {
    expect(trimProbabilities(pairs(3), 7)).toEqual(pairs(3));
  });
});

describe("trimmingProbabilities", () => {
  const sampler = {} as NativeSampler;

  it("trims what the sampling (or the hook it wraps) returned, keeping the token and the rest", async () => {
    const hook = trimmingProbabilities();
    const result = await hook(async () => [45, pairs(60), 0.5], 0, sampler, [true, false]);
    expect(result).toEqual([45, [...pairs(60).slice(0, 2 * MAX_TOP_LOGPROBS), 45, 0.005], 0.5]);
    const seen: unknown[] = [];
    const wrapped = trimmingProbabilities(async (sample, index, s, rest) => {
      seen.push(index, rest);
      return sample(index, s, ...rest);
    });
    expect(await wrapped(async () => [99, pairs(2)], 7, sampler, [true])).toEqual([99, pairs(2)]);
    expect(seen).toEqual([7, [true]]);
  });

  it("passes a result without probabilities through", async () => {
    expect(await trimmingProbabilities()(async () => 12, 0, sampler, [])).toBe(12);
  });
});
