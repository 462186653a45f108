import type {
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
  SequenceEvaluateOptions,
  Token,
  TokenBias,
} from "node-llama-cpp";
import { randomInt } from "node:crypto";
import { AppError } from "../../errors.js";
import { DEFAULT_TOP_K, DEFAULT_TOP_P } from "../../domain/sampling-limits.js";
import { StopMatcher } from "../stop-matcher.js";
import type { AdapterBatching, NativeLora } from "./adapter-batching.js";
import type { SampleHooks } from "./sample-hooks.js";
import { logitBiases, tokenBiasOf } from "./token-bias.js";
import { TypicalSampling } from "./typical-sampling.js";
import { checkTokenIds } from "./vocabulary-check.js";
import { EXPRESS_PRIORITY, OTHER_PRIORITY, type StepGang } from "./step-gang.js";
import type { EngineAdapter, EngineContext, GenerateRequest, GenerateResult } from "./engine.js";
import { TokenTextDecoder } from "./token-text.js";

/**
 * One llama.cpp context: a fixed number of sequences evaluated together in batches.
 * Each request takes a fresh sequence, or waits for one in arrival order; express requests
 * wait ahead of the others (the express lane, docs/security.md).
 *
 * A sequence is never reused: clearing a used one (`clearHistory`) takes the context's
 * lock, which the batch loop holds for as long as other sequences keep generating, so
 * a request on a reused sequence would wait for everybody else's generation to end.
 * A disposed sequence's cells are freed under that lock in the background instead,
 * and its slot comes back once they are. While a request waits for such a slot, the
 * running generations pause between tokens (see `yieldToReclaim`).
 */
export class LlamaEngineContext implements EngineContext {
  /** Requests waiting for a sequence: express ones are served first. */
  private readonly waiting = { express: [] as Waiter[], other: [] as Waiter[] };
  /** Sequences disposed whose slots are not back yet. */
  private reclaiming = 0;
  /** Generations paused until a slot comes back. */
  private parked: (() => void)[] = [];

  constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    /** The context's batch strategy: keeps the generating sequences in step. */
    private readonly gang: StepGang,
    /** Per-sequence sampling hooks (typical sampling). */
    private readonly hooks: SampleHooks,
    /** Tokens of the model's vocabulary: request token IDs are checked against it. */
    private readonly vocabularySize: number,
    /** Present on a context that serves adapters: it groups batches by adapter. */
    private readonly batching?: AdapterBatching,
  ) {}

  get contextSize(): number {
    return this.context.contextSize;
  }

  get sequences(): number {
    return this.context.totalSequences;
  }

  async generate(
    request: GenerateRequest,
    signal: AbortSignal,
    onText: (text: string) => void,
  ): Promise<GenerateResult> {
    checkTokenIds(request.promptTokens, this.vocabularySize, "prompt");
    checkTokenIds(
      (request.sampling.logitBias ?? []).map(([token]) => token),
      this.vocabularySize,
      "logit_bias",
    );
    const prompt = this.fitted(this.promptTokens(request.promptTokens), request.sampling);
    const available = this.contextSize - prompt.length;
    const maxTokens = request.sampling.maxTokens ?? available;
    if (available <= 0 || maxTokens > available) {
      throw new AppError(
        "context_length_exceeded",
        `This model's context holds ${this.contextSize} tokens per request; the prompt has ${prompt.length} tokens` +
          (request.sampling.maxTokens === null ? "." : ` and max_tokens asks for ${maxTokens} more.`) +
          " Shorten the prompt or lower max_tokens" +
          (request.sampling.onContextOverflow === "truncate"
            ? "."
            : ', or ask for context_length_exceeded_behavior "truncate".'),
        { param: available <= 0 ? "prompt" : "max_tokens" },
      );
    }
    const lora = this.loraOf(request.adapter);
    const express = request.express === true;
    const sequence = await this.acquire(signal, express);
    if (!sequence) return { finishReason: "cancelled", promptTokens: prompt.length, completionTokens: 0 };
    this.gang.enter();
    try {
      this.batching?.assign(sequence, lora);
      return await this.run(sequence, prompt, maxTokens, request, signal, onText);
    } finally {
      this.gang.leave();
      this.batching?.release(sequence);
      this.release(sequence);
    }
  }

  private async run(
    sequence: LlamaContextSequence,
    prompt: Token[],
    maxTokens: number,
    request: GenerateRequest,
    signal: AbortSignal,
    onText: (text: string) => void,
  ): Promise<GenerateResult> {
    const stops = new StopMatcher([...request.sampling.stop, ...(request.extraStop ?? [])]);
    const decoder = new TokenTextDecoder((tokens, last) =>
      this.model.detokenize(tokens as Token[], false, last as Token[]),
    );
    const generated: Token[] = [];
    let finishReason: GenerateResult["finishReason"] = "stop";
    let stopped = false;
    const emit = (text: string) => {
      const out = stops.push(text);
      if (out.text) onText(out.text);
      stopped = out.stopped;
    };
    const biases = logitBiases(request.sampling.logitBias ?? []);
    const options = evaluateOptions(request, generated, biases.size > 0 ? tokenBiasOf(this.model, biases) : undefined);
    const typical = this.typicalSampling(sequence, request, options, biases);
    try {
      if (signal.aborted) finishReason = "cancelled";
      else {
        for await (const token of sequence.evaluate(prompt, options)) {
          generated.push(token);
          emit(decoder.push(token));
          if (stopped) break;
          if (signal.aborted) {
            finishReason = "cancelled";
            break;
          }
          if (generated.length >= maxTokens) {
            finishReason = "length";
            break;
          }
          await this.yieldToReclaim();
        }
      }
    } finally {
      if (typical) {
        this.hooks.remove(sequence);
        typical.dispose();
      }
    }
    if (!stopped) emit(decoder.flush());
    if (stopped) finishReason = "stop";
    else {
      const rest = stops.flush();
      if (rest) onText(rest);
    }
    return { finishReason, promptTokens: prompt.length, completionTokens: generated.length };
  }

  /** Typical sampling's hook on the sequence, when the request asks for it (and samples at all). */
  private typicalSampling(
    sequence: LlamaContextSequence,
    request: GenerateRequest,
    options: SequenceEvaluateOptions,
    biases: ReadonlyMap<number, number>,
  ): TypicalSampling | undefined {
    const { typicalP, temperature } = request.sampling;
    if (typicalP === undefined || typicalP >= 1 || temperature === 0) return undefined;
    const typical = new TypicalSampling(sequence, this.model, options, typicalP, this.vocabularySize, biases);
    this.hooks.set(sequence, typical.hook);
    return typical;
  }

  private loraOf(adapter: EngineAdapter | undefined): NativeLora | undefined {
    if (adapter === undefined) return undefined;
    if (!this.batching) throw new Error("this context was not created to serve adapters");
    return (adapter as LlamaEngineAdapter).lora;
  }

  /**
   * With onContextOverflow "truncate", the prompt without as much of its beginning as keeps
   * room for maxTokens (its BOS kept); with maxTokens null, a prompt that fills the context
   * keeps its last half, the other half left to generate. Otherwise the prompt as it is.
   */
  private fitted(prompt: Token[], sampling: GenerateRequest["sampling"]): Token[] {
    if (sampling.onContextOverflow !== "truncate") return prompt;
    const room =
      sampling.maxTokens === null
        ? prompt.length < this.contextSize
          ? prompt.length
          : Math.floor(this.contextSize / 2)
        : this.contextSize - sampling.maxTokens;
    if (prompt.length <= room) return prompt;
    const bos = this.model.tokens.bos;
    const keepBos = bos !== null && prompt[0] === bos && this.model.tokens.shouldPrependBosToken;
    // Nothing of the prompt would be left: the error says why.
    if (room <= (keepBos ? 1 : 0)) return prompt;
    return keepBos ? [prompt[0]!, ...prompt.slice(prompt.length - room + 1)] : prompt.slice(prompt.length - room);
  }

  /** The tokens to evaluate: the model's BOS first where it wants one; never empty. */
  private promptTokens(tokens: number[]): Token[] {
    const bos = this.model.tokens.bos;
    const wantsBos = this.model.tokens.shouldPrependBosToken && bos !== null;
    if (wantsBos && tokens[0] !== bos) return [bos, ...tokens] as Token[];
    if (tokens.length > 0) return tokens as Token[];
    if (bos !== null) return [bos];
    throw new AppError("invalid_request", "The prompt is empty.", { param: "prompt" });
  }

  private acquire(signal: AbortSignal, express: boolean): Promise<LlamaContextSequence | undefined> {
    const queue = express ? this.waiting.express : this.waiting.other;
    if (queue.length === 0 && this.free()) return Promise.resolve(this.context.getSequence());
    return new Promise((resolve) => {
      const waiter = (s: LlamaContextSequence) => {
        signal.removeEventListener("abort", onAbort);
        resolve(s);
      };
      const onAbort = () => {
        const at = queue.indexOf(waiter);
        if (at !== -1) queue.splice(at, 1);
        resolve(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
    });
  }

  /** A sequence can be had now. */
  private free(): boolean {
    return !this.context.disposed && this.context.sequencesLeft > 0;
  }

  /** Disposes the sequence; once its slot is back, the longest-waiting request gets a fresh one (express ones first). */
  private release(sequence: LlamaContextSequence) {
    this.reclaiming++;
    void sequence
      .dispose()
      // A sequence that fails to dispose is gone with its context; the slot is counted free either way.
      .catch(() => {})
      .then(() => {
        this.reclaiming--;
        for (const queue of [this.waiting.express, this.waiting.other]) {
          while (queue.length > 0 && this.free()) queue.shift()!(this.context.getSequence());
        }
        const parked = this.parked;
        this.parked = [];
        for (const resume of parked) resume();
      });
  }

  /**
   * Freeing a slot takes the context's lock, which node-llama-cpp's batch loop keeps for
   * as long as some sequence has a decode queued; with several generating out of step
   * that is until they have all ended. So while a request waits for a slot being freed,
   * each generation holds back its next token (a generator decodes only when asked)
   * until the slot is back: the loop runs dry, lets go of the lock, and everybody goes on.
   */
  private async yieldToReclaim(): Promise<void> {
    if (this.waiting.express.length + this.waiting.other.length === 0 || this.reclaiming === 0) return;
    this.gang.hold();
    await new Promise<void>((resume) => this.parked.push(resume));
    this.gang.resume();
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
  }
}

type Waiter = (sequence: LlamaContextSequence) => void;

/** An adapter as this engine loads it: the engine's handle on its native weights. */
export interface LlamaEngineAdapter extends EngineAdapter {
  readonly lora: NativeLora;
}

function evaluateOptions(request: GenerateRequest, generated: Token[], tokenBias?: TokenBias): SequenceEvaluateOptions {
  const s = request.sampling;
  const options: SequenceEvaluateOptions = {
    temperature: s.temperature,
    evaluationPriority: request.express === true ? EXPRESS_PRIORITY : OTHER_PRIORITY,
  };
  if (tokenBias) options.tokenBias = tokenBias;
  if (s.temperature > 0) {
    options.topK = s.topK ?? DEFAULT_TOP_K;
    options.topP = s.topP ?? DEFAULT_TOP_P;
    if (s.minP !== undefined) options.minP = s.minP;
    // Without a seed node-llama-cpp seeds with the current second, the same for every
    // generation started in it (n choices alike, every client alike): a random one instead.
    options.seed = s.seed ?? randomInt(2 ** 32);
  }
  const penalised =
    (s.repetitionPenalty !== undefined && s.repetitionPenalty !== 1) ||
    Boolean(s.presencePenalty) ||
    Boolean(s.frequencyPenalty);
  if (penalised) {
    options.repeatPenalty = {
      punishTokens: () => generated.slice(-256),
      maxPunishTokens: 256,
      penalty: s.repetitionPenalty ?? 1,
      presencePenalty: s.presencePenalty ?? 0,
      frequencyPenalty: s.frequencyPenalty ?? 0,
    };
  }
  return options;
}
