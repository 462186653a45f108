import { type LlamaModel, TokenBias } from "node-llama-cpp";
import { BAN_BIAS } from "../../domain/sampling-limits.js";

/**
 * A request's logit_bias as node-llama-cpp's TokenBias: each bias is added to its token's
 * logit before anything else of the sampling (llama.cpp's logit-bias sampler heads the
 * chain), and BAN_BIAS (−100) is −∞, a ban. The biases go into the TokenBias's internal map
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

/** [token, bias] pairs as the logits see them: BAN_BIAS and below are −∞. */
export function logitBiases(pairs: readonly (readonly [number, number])[]): Map<number, number> {
  return new Map(pairs.map(([token, value]) => [token, value <= BAN_BIAS ? Number.NEGATIVE_INFINITY : value]));
}
