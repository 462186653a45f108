import { type LlamaModel, TokenBias } from "node-llama-cpp";
import { BAN_BIAS } from "../../domain/sampling-limits.js";

/**
 * A request's logit_bias as node-llama-cpp's TokenBias: each bias is added to its token's
 * logit before anything else of the sampling (llama.cpp's logit-bias sampler heads the
 * chain), and BAN_BIAS (−100) is BANNED_LOGIT, a ban. The biases go into the TokenBias's internal map
 * directly: its `set` takes probabilities, not logits, and skips end-of-generation tokens,
 * whose bias (banning the end of text, say) a request may well ask for.
 */
export function tokenBiasOf(model: LlamaModel, biases: ReadonlyMap<number, number>): TokenBias {
  const bias = TokenBias.for(model);
  const map = (bias as unknown as { _biases?: unknown })._biases;
  if (!(map instanceof Map))
    throw new Error("node-llama-cpp's TokenBias has no _biases map: tokenBiasOf needs updating");
  for (const [token, value] of biases) map.set(token, value);
  return bias;
}

/**
 * The bias of a banned token: so far below any logit that its probability is 0, yet finite.
 * With −∞ among the biases, node-llama-cpp's native sampler under a grammar (llama.cpp 0.4.0)
 * stops applying the grammar: greedy answers of NUL bytes where the grammar allows only "{".
 * Finite, a ban also yields to the grammar where the grammar allows nothing else.
 */
export const BANNED_LOGIT = -1e9;

/** [token, bias] pairs as the logits see them: BAN_BIAS and below are BANNED_LOGIT. */
export function logitBiases(pairs: readonly (readonly [number, number])[]): Map<number, number> {
  return new Map(pairs.map(([token, value]) => [token, value <= BAN_BIAS ? BANNED_LOGIT : value]));
}
