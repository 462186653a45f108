import type { LlamaContext, LlamaModel } from "node-llama-cpp";
import { withoutGrammarBans } from "./grammar-token-bans.js";

/** A sampler's settings as node-llama-cpp hands them to its native sampler (`_resolveSamplerConfig`). */
type SamplerConfig = Record<string, unknown>;

interface NativeSampler {
  applyConfig(config: SamplerConfig): unknown;
  dispose(): unknown;
}

type NativeSamplerClass = new (model: unknown) => NativeSampler;

interface NativeContext {
  sampleToken(...args: unknown[]): Promise<unknown>;
}

/**
 * The settings that truncate the distribution (and a grammar, whose state a second sampler must
 * not touch; the tokens banned under it go too, withoutGrammarBans).
 */
const TRUNCATING = ["topK", "topP", "minP", "xtcProbability", "xtcThreshold", "grammarEvaluationState"];

/**
 * Makes node-llama-cpp's `probabilities` (evaluateWithMetadata, controlledEvaluate) the
 * distribution before truncation: after the temperature, the penalties and the token biases,
 * before top_k, top_p, min_p and XTC. Natively they come from the sampler's candidates after
 * its whole chain, so with top_k 40 they hold 40 tokens, renormalised.
 *
 * When a sampling asks for probabilities and its settings truncate, a second native sampler
 * (the view, one per sampler) with the same settings less the truncating ones samples the same
 * logits first, and its probabilities are returned; then the request's own sampler samples the
 * token exactly as it would have without probabilities (same chain, same random draws), so
 * asking for logprobs never changes the text. A grammar is left out of the view (its state is
 * shared): under one, the probabilities are the unconstrained model's. Settings that do not
 * truncate (greedy; top_k 0 with top_p 1) are sampled once, as node-llama-cpp would.
 *
 * The cost, only for samplings that ask for probabilities: one more pass over the vocabulary
 * (copy, sort, softmax) and node-llama-cpp's transfer of the whole distribution into JS.
 *
 * node-llama-cpp has no public way to do this, so it goes through three of its internals,
 * each checked: the native sampler class on `llama._bindings` (wrapped so that each sampler's
 * last settings are known), the model's native handle (`_model`), and the context's native
 * `sampleToken` (wrapped, like guardSampling does). The engine's logprob tests compare
 * with the bigram oracle and fail on a version where this stops working.
 */
export function enableProbabilityViews(context: LlamaContext, model: LlamaModel): void {
  const views = viewsOf(model);
  const native = (context as unknown as { _ctx?: NativeContext })._ctx;
  const modelHandle = (model as unknown as { _model?: unknown })._model;
  if (typeof native?.sampleToken !== "function" || modelHandle === undefined) {
    throw new Error("node-llama-cpp's context has no native sampleToken: probability views need updating");
  }
  const sample = native.sampleToken.bind(native);
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    value: (...args: unknown[]) => {
      const [index, sampler, probabilities] = args;
      if (probabilities !== true) return sample(...args);
      const config = views.settings.get(sampler as object);
      if (config === undefined) throw new Error("a sampler's settings are unknown: probability views need updating");
      if (!truncates(config)) return sample(...args);
      return views.sampleThroughView(sample, index, sampler as NativeSampler, config, modelHandle);
    },
  });
}

function truncates(config: SamplerConfig): boolean {
  if (config.grammarEvaluationState != null || config.xtcProbability != null) return true;
  // Greedy sampling's chain has no truncation (nor temperature).
  if (typeof config.temperature !== "number" || config.temperature <= 0) return false;
  const { topK, topP, minP } = config;
  return (
    (typeof topK === "number" && topK > 0) ||
    (typeof topP === "number" && topP < 1) ||
    (typeof minP === "number" && minP > 0)
  );
}

class ProbabilityViews {
  /** Each sampler's last settings. */
  readonly settings = new WeakMap<object, SamplerConfig>();
  private readonly views = new WeakMap<object, NativeSampler>();

  constructor(private readonly Sampler: NativeSamplerClass) {}

  /** Records the settings of a sampler node-llama-cpp makes, and frees its view with it. */
  watch(sampler: NativeSampler): void {
    const apply = sampler.applyConfig.bind(sampler);
    const dispose = sampler.dispose.bind(sampler);
    // The native methods are read-only on the prototype: shadow them on the instance.
    Object.defineProperty(sampler, "applyConfig", {
      configurable: true,
      value: (config: SamplerConfig) => {
        this.settings.set(sampler, config);
        return apply(config);
      },
    });
    Object.defineProperty(sampler, "dispose", {
      configurable: true,
      value: () => {
        this.views.get(sampler)?.dispose();
        this.views.delete(sampler);
        return dispose();
      },
    });
  }

  async sampleThroughView(
    sample: (...args: unknown[]) => Promise<unknown>,
    index: unknown,
    sampler: NativeSampler,
    config: SamplerConfig,
    modelHandle: unknown,
  ): Promise<unknown> {
    let view = this.views.get(sampler);
    if (view === undefined) {
      view = new this.Sampler(modelHandle);
      this.views.set(sampler, view);
    }
    const untruncated = { ...config };
    for (const key of TRUNCATING) delete untruncated[key];
    withoutGrammarBans(untruncated);
    view.applyConfig(untruncated);
    const seen = await sample(index, view, true, false);
    if (!Array.isArray(seen)) throw new Error("node-llama-cpp's sampleToken gave no probabilities");
    // The request's own sampling, untouched: the token it would have had without logprobs.
    const token = await sample(index, sampler);
    return [token, seen[1]];
  }
}

const installed = new WeakMap<object, ProbabilityViews>();

/** The views of the model's llama.cpp binding, installed on first use (before any sampler of it asks). */
function viewsOf(model: LlamaModel): ProbabilityViews {
  const bindings = (model.llama as unknown as { _bindings?: { AddonSampler?: NativeSamplerClass } })._bindings;
  const Sampler = bindings?.AddonSampler;
  if (bindings === undefined || typeof Sampler !== "function") {
    throw new Error("node-llama-cpp's bindings have no AddonSampler: probability views need updating");
  }
  let views = installed.get(bindings);
  if (views !== undefined) return views;
  const created = new ProbabilityViews(Sampler);
  bindings.AddonSampler = new Proxy(Sampler, {
    construct(target, args) {
      const sampler = Reflect.construct(target, args) as NativeSampler;
      created.watch(sampler);
      return sampler;
    },
  });
  views = created;
  installed.set(bindings, views);
  return views;
}
