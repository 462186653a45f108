import { expect } from "vitest";
import { END_OF_TEXT } from "../../src/models/factory/bigram.js";
import { demoTables } from "../../src/models/factory/demo-models.js";
import { createBigramOracle, type BigramOracle } from "./bigram-oracle.js";

/**
 * hearth-tiny's log probabilities as Hearth reports them (docs/api.md, "Log probabilities"): log
 * softmax(logits / T) over the whole vocabulary, in float64 from the oracle's exact float32
 * logits; T = 1 for greedy requests.
 */

let base: BigramOracle | undefined;

/** The logits after `prev`, to adjust (penalties) before `logprobsOf`. */
export function oracleLogits(prev: number): Float32Array {
  base ??= createBigramOracle({ table: demoTables().base, shape: demoTables().shape });
  return base.logits(prev);
}

export function logprobsOf(logits: Float32Array, temperature: number): number[] {
  const t = temperature > 0 ? temperature : 1;
  const scaled = [...logits].map((l) => l / t);
  const max = Math.max(...scaled);
  const logSum = max + Math.log(scaled.reduce((sum, l) => sum + Math.exp(l - max), 0));
  return scaled.map((l) => l - logSum);
}

/** The log probabilities of the token after `prev`, token ID → logprob. */
export const oracleLogprobs = (prev: number, temperature: number) => logprobsOf(oracleLogits(prev), temperature);

/** hearth-tiny's token of a logprob token's text: an ASCII byte as itself, another byte as `\xNN`, or <|endoftext|>. */
export function tokenId(token: string): number {
  if (token === "<|endoftext|>") return END_OF_TEXT;
  const escaped = /^\\x([0-9a-f]{2})$/.exec(token);
  if (escaped) return Number.parseInt(escaped[1]!, 16);
  expect(token).toHaveLength(1);
  expect(token.charCodeAt(0)).toBeLessThan(0x80);
  return token.charCodeAt(0);
}

/** How far llama.cpp's logprobs may be from the oracle's, computed on the CPU (float32 throughout). */
export const CPU_TOLERANCE = 1e-4;
/**
 * On a GPU: an echoed prompt's logprobs were up to 2e-3 off the oracle's on an H200, where a
 * prompt's batch is multiplied by cuBLAS (generated tokens' stayed within 1e-4); a wrong token or
 * position is off by far more.
 */
export const GPU_TOLERANCE = 1e-2;

/**
 * A token's logprob, and its alternatives', equal the oracle's `expected` (by token ID) to
 * `tolerance`, and the alternatives are the `top` most likely tokens, most likely first (ties in
 * any order).
 */
export function expectOracleMatch(
  token: { token: string; logprob: number | null },
  alternatives: readonly { token: string; logprob: number | null }[],
  expected: readonly number[],
  top: number,
  tolerance = CPU_TOLERANCE,
): void {
  expect(Math.abs(token.logprob! - expected[tokenId(token.token)]!)).toBeLessThan(tolerance);
  expect(alternatives).toHaveLength(top);
  const best = [...expected].sort((a, b) => b - a);
  alternatives.forEach((alternative, i) => {
    expect(Math.abs(alternative.logprob! - expected[tokenId(alternative.token)]!)).toBeLessThan(tolerance);
    expect(Math.abs(alternative.logprob! - best[i]!)).toBeLessThan(tolerance);
  });
}
