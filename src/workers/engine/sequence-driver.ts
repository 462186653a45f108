import type { LlamaContextSequence, SequenceEvaluateOptions, Token } from "node-llama-cpp";

/** One generated token, and its distribution: there exactly when the generation asked for probabilities. */
export interface DrivenStep {
  token: Token;
  probabilities?: Map<Token, number>;
}

/** What the sampling answers when it has no token: node-llama-cpp's own words (sampling-error.ts reads them). */
export const NO_TOKEN_MESSAGE = "Failed to sample next token";

/** The decode node-llama-cpp's context queues for its batch loop (LlamaContext `_decodeTokens`). */
interface QueuedDecode {
  sequenceId: number;
  firstTokenSequenceIndex: number;
  tokens: Token[];
  logits: boolean[];
  evaluationPriority: number;
  tokenMeter: unknown;
  afterBatchAction?: (sequenceStateLength: number) => unknown;
}

type LogitMapper = (batchLogitIndex: number) => unknown;

interface ContextInternals {
  _decodeTokens(decode: QueuedDecode, mapper: LogitMapper): Promise<[number, unknown][]>;
  _ctx: { sampleToken(batchLogitIndex: number, sampler: object, ...metadata: boolean[]): Promise<unknown> };
  contextSize: number;
}

interface SequenceInternals {
  _context: ContextInternals;
  _sequenceId: number;
  _nextTokenIndex: number;
  _contextTokens: Token[];
  _tokenMeter: unknown;
  _resolveSamplerConfig(options: SequenceEvaluateOptions): Record<string, unknown>;
  _takeIntervalCheckpointIfNeededAfterBatch(sequenceStateLength: number): unknown;
  model: {
    isEogToken(token: Token): boolean;
    _model: unknown;
    _llama: { _bindings: { AddonSampler: new (model: unknown) => NativeSampler } };
  };
}

interface NativeSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}

/** node-llama-cpp's evaluation priority when none is given. */
const DEFAULT_PRIORITY = 5;

/**
 * Generates on a sequence, as node-llama-cpp's `evaluateWithMetadata` does, for less
 * JavaScript a token. Its evaluation, per sequence and token, takes the sequence's lock, builds
 * the native sampler's settings afresh and applies them, copies the sequence's whole token
 * record, and goes through two async generators (its own, and the caller's loop over it); this
 * queues each token's decode on the context's batch loop itself (the same queue, strategy and
 * native calls, so evaluations of node-llama-cpp's own run beside it) and samples through the
 * same native call with the same settings, applied once, or each token where they change
 * between tokens (a grammar's state, penalties over the generated tokens). Measured on 2 cores,
 * 16 sequences of hearth-tiny: 141–159 against 172–184 ms of CPU per 1,000 tokens, and at one
 * sequence 1.3–1.5 × the tokens/s (docs/performance.md).
 *
 * It reads node-llama-cpp's internals (the context's `_decodeTokens`, the sequence's ID, token
 * record, token meter, sampler settings and checkpoints, the binding's sampler), each checked
 * here; the engine tests fail on a version that changes what they do.
 *
 * Decodes `input` after the sequence's cells, then, while `onStep` answers true, the token
 * sampled last. It ends without a step at the model's end of generation, and throws
 * NO_TOKEN_MESSAGE where the sampling had no token. The context must have room for every
 * token decoded: nothing here shifts it (the engine fits prompt and max_tokens beforehand).
 */
export async function driveSequence(
  sequence: LlamaContextSequence,
  input: readonly Token[],
  options: SequenceEvaluateOptions,
  probabilities: boolean,
  onStep: (step: DrivenStep) => boolean,
): Promise<void> {
  const state = internalsOf(sequence);
  const context = state._context;
  const sampler = new state.model._llama._bindings.AddonSampler(state.model._model);
  // Settings that change between tokens are resolved at each sampling, as node-llama-cpp does:
  // a grammar's state (a tool call's comes into force mid-answer), and the tokens banned under
  // it, which depend on the last one (grammar-token-bans.ts). Penalties over the generated tokens
  // need not be: the native sampler counts each token it samples, as it would be told.
  const changing = options.grammarEvaluationState !== undefined || typeof options.tokenBias === "function";
  const apply = () => sampler.applyConfig(state._resolveSamplerConfig(options));
  const sample: LogitMapper = (index) => {
    if (changing) apply();
    // As node-llama-cpp calls it: probabilities and confidence, or neither (a batchable sampling).
    return probabilities
      ? context._ctx.sampleToken(index, sampler, true, false)
      : context._ctx.sampleToken(index, sampler);
  };
  const afterBatchAction = state._takeIntervalCheckpointIfNeededAfterBatch.bind(sequence);
  const evaluationPriority = options.evaluationPriority ?? DEFAULT_PRIORITY;
  try {
    if (!changing) apply();
    let tokens = input.slice();
    while (tokens.length > 0) {
      if (sequence.disposed) throw new Error("the sequence was disposed while it generated");
      const first = state._nextTokenIndex;
      if (first + tokens.length > context.contextSize) {
        throw new Error(`${first + tokens.length} tokens do not fit the sequence's ${context.contextSize}`);
      }
      const logits: boolean[] = [];
      logits[tokens.length - 1] = true;
      const mapped = await context._decodeTokens(
        {
          sequenceId: state._sequenceId,
          firstTokenSequenceIndex: first,
          tokens,
          logits,
          evaluationPriority,
          tokenMeter: state._tokenMeter,
          afterBatchAction,
        },
        sample,
      );
      // The cells hold the tokens now: the sequence's record says so, as node-llama-cpp's own decode does.
      state._nextTokenIndex = first + tokens.length;
      for (const token of tokens) state._contextTokens.push(token);
      const step = stepOf(mapped.at(-1)?.[1], probabilities);
      if (step === undefined || state.model.isEogToken(step.token)) return;
      if (!onStep(step)) return;
      tokens = [step.token];
    }
  } finally {
    sampler.dispose();
  }
}

/** A sampling's answer as a step: a token, or, where `asked`, a token with its probabilities (flat pairs). */
function stepOf(sampled: unknown, asked: boolean): DrivenStep | undefined {
  if (sampled === null || sampled === undefined) return undefined;
  const [token, flat] = Array.isArray(sampled) ? (sampled as [number, ArrayLike<number> | undefined]) : [sampled];
  if (token === -1) throw new Error(NO_TOKEN_MESSAGE);
  if (typeof token !== "number")
    throw new Error("node-llama-cpp's sampling gave no token: sequence-driver.ts needs updating");
  if (asked && flat === undefined) throw new Error("node-llama-cpp gave no probabilities for a token");
  if (flat === undefined) return { token: token as Token };
  const probabilities = new Map<Token, number>();
  for (let i = 1; i < flat.length; i += 2) probabilities.set(flat[i - 1] as Token, flat[i]!);
  return { token: token as Token, probabilities };
}

function internalsOf(sequence: LlamaContextSequence): SequenceInternals {
  const state = sequence as unknown as Partial<SequenceInternals>;
  const context = state._context as Partial<ContextInternals> | undefined;
  if (
    typeof context?._decodeTokens !== "function" ||
    typeof context._ctx?.sampleToken !== "function" ||
    typeof state._sequenceId !== "number" ||
    typeof state._nextTokenIndex !== "number" ||
    !Array.isArray(state._contextTokens) ||
    typeof state._resolveSamplerConfig !== "function" ||
    typeof state._takeIntervalCheckpointIfNeededAfterBatch !== "function" ||
    typeof state.model?._llama?._bindings?.AddonSampler !== "function"
  ) {
    throw new Error("node-llama-cpp's sequence and context internals changed: sequence-driver.ts needs updating");
  }
  return state as SequenceInternals;
}
