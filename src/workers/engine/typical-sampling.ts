import type { LlamaContextSequence, LlamaModel, SequenceEvaluateOptions } from "node-llama-cpp";
import type { NativeSampler, SampleHook } from "./sample-hooks.js";
import { BANNED_LOGIT } from "./token-bias.js";

/**
 * The locally typical set (Meister et al., "Locally Typical Sampling"), as llama.cpp's
 * `typical` sampler computes it with min_keep 0: the tokens ordered by how far their surprisal
 * (−ln p) is from the distribution's entropy, nearest first, taken until their probability
 * adds up to more than `typicalP`. `flat` is [token, p, token, p, …] (node-llama-cpp's
 * native form), summing to 1. Tokens of probability 0 are never in it (llama.cpp's own
 * entropy turns NaN on them).
 *
 * Rather than sorting every token by its distance (slow in JavaScript on a whole vocabulary),
 * it looks for the smallest distance whose tokens within it weigh more than `typicalP`: the
 * same set (tokens at exactly equal distances, whose order llama.cpp leaves unspecified, are
 * all in or all out).
 */
export function typicalSet(flat: ArrayLike<number>, typicalP: number): Set<number> {
  const n = flat.length >> 1;
  const p = new Float64Array(n);
  let entropy = 0;
  for (let i = 0; i < n; i++) {
    const q = flat[2 * i + 1]!;
    p[i] = q > 0 ? q : 0;
    if (q > 0) entropy -= q * Math.log(q);
  }
  const distance = new Float64Array(n);
  for (let i = 0; i < n; i++) distance[i] = p[i]! > 0 ? Math.abs(-Math.log(p[i]!) - entropy) : Number.POSITIVE_INFINITY;
  const massWithin = (limit: number) => {
    let mass = 0;
    for (let i = 0; i < n; i++) if (distance[i]! <= limit) mass += p[i]!;
    return mass;
  };
  const sorted = distance.slice().sort();
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (massWithin(sorted[mid]!) > typicalP) hi = mid;
    else lo = mid + 1;
  }
  const limit = sorted[lo]!;
  const kept = new Set<number>();
  for (let i = 0; i < n; i++) if (p[i]! > 0 && distance[i]! <= limit) kept.add(flat[2 * i]!);
  return kept;
}

const OTHER = 0;
const KEPT = 1;
const BANNED = 2;

interface SequenceInternals {
  /** node-llama-cpp's evaluate options → its native sampler's config. */
  _resolveSamplerConfig(options: SequenceEvaluateOptions): Record<string, unknown>;
}

interface ModelInternals {
  _llama: { _bindings: { AddonSampler: new (model: unknown) => NativeSampler } };
  _model: unknown;
}

/**
 * Typical sampling for one generation, which node-llama-cpp's sampler options cannot say:
 * at each step, before the sequence's own sampler draws, a probe sampler of ours reads the
 * step's distribution (after logit_bias, the penalties and top_k, before temperature:
 * llama.cpp's order, where typical comes between top_k and top_p), and the tokens outside its
 * typical set are banned (a bias of −∞) in the sequence's sampler for that draw. Everything
 * else of the draw is unchanged: top_p, min_p, temperature and the seeded random state, so a
 * seed stays reproducible. Exact up to float rounding; the cost per token is one more
 * sampling of the logits (docs/performance.md).
 *
 * Uses three of node-llama-cpp's internals, each checked here: the sequence's
 * `_resolveSamplerConfig`, and the model's native handle and binding to make the probe sampler.
 */
export class TypicalSampling {
  private readonly probe: NativeSampler;
  private readonly probeOptions: SequenceEvaluateOptions;
  private readonly keys: Uint32Array;
  private readonly values: Float32Array;
  private readonly userBias: Map<number, number>;
  /** Per token, this step: KEPT, BANNED or OTHER. */
  private readonly state: Uint8Array;

  constructor(
    private readonly sequence: LlamaContextSequence,
    model: LlamaModel,
    /** The options the sequence evaluates with (node-llama-cpp applies them before each draw). */
    private readonly options: SequenceEvaluateOptions,
    private readonly typicalP: number,
    vocabularySize: number,
    /** The request's logit_bias, already in `options.tokenBias`: kept for the tokens the typical set keeps. */
    userBias: ReadonlyMap<number, number>,
  ) {
    const internals = model as unknown as Partial<ModelInternals>;
    const AddonSampler = internals._llama?._bindings?.AddonSampler;
    if (
      typeof AddonSampler !== "function" ||
      internals._model == null ||
      typeof (sequence as unknown as Partial<SequenceInternals>)._resolveSamplerConfig !== "function"
    ) {
      throw new Error("node-llama-cpp's sampler internals are not there: TypicalSampling needs updating");
    }
    this.probe = new AddonSampler(internals._model);
    this.probeOptions = {
      temperature: 1,
      topK: options.topK,
      topP: 1,
      minP: 0,
      seed: 0,
      tokenBias: options.tokenBias,
      repeatPenalty: options.repeatPenalty,
    };
    this.keys = new Uint32Array(vocabularySize);
    this.values = new Float32Array(vocabularySize);
    this.state = new Uint8Array(vocabularySize);
    this.userBias = new Map(userBias);
  }

  readonly hook: SampleHook = async (sample, batchLogitIndex, sampler, rest) => {
    this.probe.applyConfig(this.resolve(this.probeOptions));
    const [, flat] = (await sample(batchLogitIndex, this.probe, true, false)) as [number, number[] | undefined];
    if (!flat)
      throw new Error("node-llama-cpp's sampleToken returned no probabilities: TypicalSampling needs updating");
    const kept = typicalSet(flat, this.typicalP);
    const config = this.resolve(this.options);
    const n = this.bans(flat, kept);
    config.tokenBiasKeys = this.keys.subarray(0, n);
    config.tokenBiasValues = this.values.subarray(0, n);
    // The top |kept| of what is not banned are the kept tokens: top_k drops nothing else.
    config.topK = kept.size;
    sampler.applyConfig(config);
    return sample(batchLogitIndex, sampler, ...rest);
  };

  /**
   * Fills the bias arrays: −∞ for the candidates (top_k's tokens, `flat`) outside the typical
   * set, the request's own biases for the rest. Then top_k of the kept set's size keeps exactly
   * the kept tokens, since every token outside the candidates is less likely than all of them;
   * unless one may be as likely as a kept one (a tie at top_k's edge), where every token outside
   * the kept set is banned instead. Returns how many entries it wrote.
   */
  private bans(flat: ArrayLike<number>, kept: ReadonlySet<number>): number {
    const vocabulary = this.keys.length;
    const state = this.state;
    state.fill(OTHER);
    for (const token of kept) state[token] = KEPT;
    let leastKept = Number.POSITIVE_INFINITY;
    let leastCandidate = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const token = flat[i]!;
      leastCandidate = Math.min(leastCandidate, flat[i + 1]!);
      if (state[token] === KEPT) leastKept = Math.min(leastKept, flat[i + 1]!);
      else state[token] = BANNED;
    }
    const candidates = flat.length / 2;
    if (candidates < vocabulary && kept.size < candidates && leastKept <= leastCandidate) {
      for (let token = 0; token < vocabulary; token++) if (state[token] === OTHER) state[token] = BANNED;
    }
    let n = 0;
    for (let token = 0; token < vocabulary; token++) {
      if (state[token] !== BANNED) continue;
      this.keys[n] = token;
      this.values[n] = BANNED_LOGIT;
      n++;
    }
    for (const [token, bias] of this.userBias) {
      if (state[token] === BANNED) continue;
      this.keys[n] = token;
      this.values[n] = bias;
      n++;
    }
    return n;
  }

  dispose(): void {
    this.probe.dispose();
  }

  private resolve(options: SequenceEvaluateOptions): Record<string, unknown> {
    return (this.sequence as unknown as SequenceInternals)._resolveSamplerConfig(options);
  }
}
