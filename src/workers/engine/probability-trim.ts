import { MAX_TOP_LOGPROBS } from "../../domain/logprobs.js";
import type { SampleHook } from "./sample-hooks.js";

/**
 * A generation's sampling hook that hands node-llama-cpp only the part of a token's
 * probabilities that logprobs report: the MAX_TOP_LOGPROBS most likely tokens and the sampled
 * one. node-llama-cpp turns the native sampling's list (every candidate, most likely first) into
 * a Map of the whole vocabulary at every token, on the main thread: 60–70 ms a token for Qwen's
 * 152k tokens, against nothing for 21 (docs/performance.md, "Sampling costs").
 *
 * Only for a generation's own tokens, whose logprob is the sampled token's: a prompt's echo
 * scores tokens that were not sampled and needs every probability.
 */
export function trimmingProbabilities(inner?: SampleHook): SampleHook {
  return async (sample, batchLogitIndex, sampler, rest) => {
    const result = inner
      ? await inner(sample, batchLogitIndex, sampler, rest)
      : await sample(batchLogitIndex, sampler, ...rest);
    if (!Array.isArray(result) || !Array.isArray(result[1])) return result;
    const [token, probabilities, ...more] = result as [number, number[], ...unknown[]];
    return [token, trimProbabilities(probabilities, token), ...more];
  };
}

/**
 * From node-llama-cpp's flat list of (token, probability) pairs, most likely first: the first
 * MAX_TOP_LOGPROBS pairs, and `token`'s pair after them when it is not among them.
 */
export function trimProbabilities(pairs: readonly number[], token: number): number[] {
  const kept = pairs.slice(0, 2 * MAX_TOP_LOGPROBS);
  for (let i = 0; i < kept.length; i += 2) if (kept[i] === token) return kept;
  for (let i = kept.length; i < pairs.length; i += 2) {
    if (pairs[i] === token) {
      kept.push(token, pairs[i + 1]!);
      break;
    }
  }
  return kept;
}
