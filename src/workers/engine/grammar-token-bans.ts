import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { BANNED_LOGIT } from "./token-bias.js";
import { NARROW_SECOND_BYTE, TokenPieces, pieceShape } from "./token-pieces.js";

/** Token IDs and their logit biases, as node-llama-cpp hands them to its native sampler. */
interface BiasArrays {
  keys: Uint32Array;
  values: Float32Array;
}

/**
 * The tokens a grammar must not be offered, per model: those whose piece llama.cpp's grammar
 * reads differently from the text Hearth writes for it. llama.cpp (v0.4.0) checks a token
 * against a grammar by decoding its piece leniently: it does not check the bytes inside one
 * piece that continue a character (so C0 80 reads as U+0000, C0 BA as ':'), it stops at a NUL
 * byte (a piece with one is checked only up to it), and across pieces it takes overlong and
 * surrogate completions (E0 then 82 A9). Such a token can be allowed as one thing and written as
 * another (invalid JSON, a string that fails its schema), and a piece read as U+0000 is refused
 * only once sampled, which fails the sampling (sampling-guard.ts).
 *
 * So under a grammar Hearth bans:
 * - pieces with a NUL byte or with anything that is not UTF-8 inside them (token-pieces.ts);
 * - control tokens but the end-of-generation ones (their text counts for the grammar, but
 *   Hearth writes none; the grammar itself allows the end only where the value is complete);
 * - right after a piece that ends with a lone E0, ED, F0 or F4 byte, whose next byte has a
 *   narrower range than other continuations, pieces that begin with a byte outside that range.
 * A piece may still begin in the middle of a character or end before its end: a character
 * spelled over several byte tokens stays writable, and llama.cpp checks those joins itself.
 */
export class GrammarTokenBans {
  /** Tokens banned whatever came before. */
  private readonly always: BiasArrays;
  /** Tokens banned after a piece that ends with one of NARROW_SECOND_BYTE's lead bytes, alone. */
  private readonly afterLead = new Map<number, BiasArrays>();

  private constructor(
    banned: readonly number[],
    continuing: readonly { token: number; first: number }[],
    private readonly leadAtEnd: ReadonlyMap<number, number>,
  ) {
    this.always = biasArrays(banned);
    for (const [lead, [low, high]] of NARROW_SECOND_BYTE) {
      const outside = continuing.filter(({ first }) => first < low || first > high).map(({ token }) => token);
      this.afterLead.set(lead, biasArrays([...banned, ...outside]));
    }
  }

  /**
   * The bans of `model`'s vocabulary, computed on first use: a pass over the vocabulary, once
   * per model, in slices so that the generations already running go on meanwhile.
   */
  static of(model: LlamaModel): Promise<GrammarTokenBans> {
    let bans = computed.get(model);
    if (bans === undefined) {
      bans = GrammarTokenBans.compute(model);
      computed.set(model, bans);
    }
    return bans;
  }

  private static async compute(model: LlamaModel): Promise<GrammarTokenBans> {
    const pieces = new TokenPieces(model);
    const banned: number[] = [];
    const continuing: { token: number; first: number }[] = [];
    const leadAtEnd = new Map<number, number>();
    for (let token = 0; token < pieces.count; token++) {
      if (token % SLICE === SLICE - 1) await new Promise((resume) => setImmediate(resume));
      if (model.isEogToken(token as Token)) continue;
      const bytes = pieces.bytes(token);
      const shape = bytes && pieceShape(bytes);
      if (!shape) {
        banned.push(token);
        continue;
      }
      if (shape.trailingLead !== undefined) leadAtEnd.set(token, shape.trailingLead);
      if (shape.continuing !== undefined) continuing.push({ token, first: shape.continuing });
    }
    return new GrammarTokenBans(banned, continuing, leadAtEnd);
  }

  /** How many tokens are banned whatever came before. */
  get size(): number {
    return this.always.keys.length;
  }

  /** The tokens banned after `previous` (the last token generated, if any). */
  after(previous: number | undefined): BiasArrays {
    const lead = previous === undefined ? undefined : this.leadAtEnd.get(previous);
    return (lead !== undefined && this.afterLead.get(lead)) || this.always;
  }

  /**
   * Bans these tokens from `sequence`'s samplings whenever a grammar is in force, beside the
   * request's own token biases. node-llama-cpp turns a TokenBias into arrays at every token (a
   * pass over its map, milliseconds for a ban of this size: docs/performance.md), so the bans go into
   * the sampler's settings as arrays made once, through the sequence's internal
   * `_resolveSamplerConfig`, shadowed on this sequence alone, until the returned function takes
   * the shadow away (the sequence serves other requests after this one). Its native sampler
   * keeps its logit-bias stage while the arrays stay the same.
   */
  applyTo(sequence: LlamaContextSequence, generated: readonly Token[]): () => void {
    const internal = sequence as unknown as { _resolveSamplerConfig?: (options: unknown) => SamplerConfig };
    const resolve = internal._resolveSamplerConfig;
    if (typeof resolve !== "function") {
      throw new Error("node-llama-cpp's sequence has no _resolveSamplerConfig: grammar-token-bans.ts needs updating");
    }
    Object.defineProperty(sequence, "_resolveSamplerConfig", {
      configurable: true,
      value: (options: unknown) => {
        const config = resolve.call(sequence, options);
        if (config.grammarEvaluationState == null) return config;
        const bans = this.after(generated.at(-1));
        const own = { keys: config.tokenBiasKeys, values: config.tokenBiasValues };
        // Both lists apply in turn (llama.cpp adds every entry's bias): a banned token stays banned.
        config.tokenBiasKeys = concat(own.keys, bans.keys, Uint32Array);
        config.tokenBiasValues = concat(own.values, bans.values, Float32Array);
        requestBiases.set(config.tokenBiasKeys, own);
        return config;
      },
    });
    return () => {
      delete (sequence as unknown as { _resolveSamplerConfig?: unknown })._resolveSamplerConfig;
    };
  }
}

/** The settings node-llama-cpp resolves for its native sampler, those read here typed. */
export interface SamplerConfig {
  grammarEvaluationState?: unknown;
  tokenBiasKeys?: Uint32Array;
  tokenBiasValues?: Float32Array;
}

const computed = new WeakMap<LlamaModel, Promise<GrammarTokenBans>>();

/** The request's own token biases, by the list of them and the bans that replaced it in a sampler's settings. */
const requestBiases = new WeakMap<Uint32Array, { keys?: Uint32Array; values?: Float32Array }>();

/**
 * Sampler settings as they would be without the grammar's bans (the request's own biases
 * alone), for a sampling that leaves the grammar out (probability-view.ts).
 */
export function withoutGrammarBans(config: SamplerConfig): void {
  const own = config.tokenBiasKeys && requestBiases.get(config.tokenBiasKeys);
  if (own === undefined) return;
  config.tokenBiasKeys = own.keys;
  config.tokenBiasValues = own.values;
  if (own.keys === undefined) {
    delete config.tokenBiasKeys;
    delete config.tokenBiasValues;
  }
}

/** Tokens looked at between two turns of the event loop while the bans are computed. */
const SLICE = 4096;

function biasArrays(tokens: readonly number[]): BiasArrays {
  return { keys: Uint32Array.from(tokens), values: new Float32Array(tokens.length).fill(BANNED_LOGIT) };
}

function concat<T extends Uint32Array | Float32Array>(
  first: T | undefined,
  second: T,
  Type: { new (length: number): T },
): T {
  if (first === undefined || first.length === 0) return second;
  const joined = new Type(first.length + second.length);
  joined.set(first);
  joined.set(second, first.length);
  return joined;
}
