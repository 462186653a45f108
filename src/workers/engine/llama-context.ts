import {
  LlamaGrammarEvaluationState,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type SequenceEvaluateOptions,
  type Token,
} from "node-llama-cpp";
import { AppError } from "../../errors.js";
import { StopMatcher } from "../stop-matcher.js";
import type { AdapterBatching, NativeLora } from "./adapter-batching.js";
import type { SampleHooks } from "./sample-hooks.js";
import { logitBiases, tokenBiasOf } from "./token-bias.js";
import { TypicalSampling } from "./typical-sampling.js";
import { withGreedyFloor } from "./greedy-floor.js";
import { checkTokenIds } from "./vocabulary-check.js";
import type { StepGang } from "./step-gang.js";
import type { EngineAdapter, EngineContext, GenerateRequest, GenerateResult, OnText } from "./engine.js";
import { LogprobLedger } from "./logprob-ledger.js";
import { trimmingProbabilities } from "./probability-trim.js";
import { echoPrompt, type ReadPrompt } from "./prompt-echo.js";
import { TokenLogprobs } from "./token-logprobs.js";
import type { LlamaGrammars } from "./llama-grammars.js";
import { GrammarTokenBans } from "./grammar-token-bans.js";
import { withSamplingErrors } from "./sampling-error.js";
import { takeSamplingFailure } from "./serial-sampling.js";
import { evaluateOptions } from "./evaluate-options.js";
import { ToolCallConstraint } from "./tool-call-constraint.js";
import { TokenTextDecoder } from "./token-text.js";
import { toolCallGrammar } from "./tool-call-grammar.js";

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
  /** Tokens as logprobs show them, for requests that ask. */
  private readonly tokenLogprobs: TokenLogprobs;

  constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    /** The context's batch strategy: keeps the generating sequences in step. */
    private readonly gang: StepGang,
    /** The engine's compiled grammars, for requests with an output constraint. */
    private readonly grammars: LlamaGrammars,
    /** Per-sequence sampling hooks (typical sampling, logprobs' trimmed probabilities). */
    private readonly hooks: SampleHooks,
    /** Tokens of the model's vocabulary: request token IDs are checked against it. */
    private readonly vocabularySize: number,
    /** Present on a context that serves adapters: it groups batches by adapter. */
    private readonly batching?: AdapterBatching,
  ) {
    this.tokenLogprobs = new TokenLogprobs(model);
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  get sequences(): number {
    return this.context.totalSequences;
  }

  async generate(asked: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult> {
    const request = withGreedyFloor(asked);
    checkTokenIds(request.promptTokens, this.vocabularySize, "prompt");
    checkTokenIds(
      (request.sampling.logitBias ?? []).map(([token]) => token),
      this.vocabularySize,
      "logit_bias",
    );
    const given = this.promptTokens(request.promptTokens);
    const prompt = this.fitted(given, request.sampling);
    const read = { from: given.length - request.promptTokens.length, truncated: prompt.length < given.length };
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
    // Compiled (or refused) before a sequence is taken, so a bad grammar waits for nobody.
    const constraint = request.sampling.constraint;
    const grammar = constraint ? await this.grammars.get(constraint) : undefined;
    const calls = await this.toolCalls(request);
    const bans = grammar || calls ? await GrammarTokenBans.of(this.model) : undefined;
    const express = request.express === true;
    const sequence = await this.acquire(signal, express);
    if (!sequence) return { finishReason: "cancelled", promptTokens: prompt.length, completionTokens: 0 };
    this.gang.enter();
    try {
      this.batching?.assign(sequence, lora);
      return await this.run(sequence, prompt, read, maxTokens, request, { grammar, calls, bans }, signal, onText);
    } finally {
      this.gang.leave();
      this.batching?.release(sequence);
      this.release(sequence);
    }
  }

  private async run(
    sequence: LlamaContextSequence,
    prompt: Token[],
    read: ReadPrompt,
    maxTokens: number,
    request: GenerateRequest,
    { grammar, calls, bans }: Constraints,
    signal: AbortSignal,
    onText: OnText,
  ): Promise<GenerateResult> {
    // Under a grammar the grammar says where the output ends: a template's stop strings (the
    // next turn's marker) could occur inside a JSON string and cut it.
    const stops = new StopMatcher([...request.sampling.stop, ...(grammar ? [] : (request.extraStop ?? []))]);
    const grammarState = grammar ? new LlamaGrammarEvaluationState({ model: this.model, grammar }) : undefined;
    const decoder = this.decoder(prompt);
    const generated: Token[] = [];
    let finishReason: GenerateResult["finishReason"] = "stop";
    let stopped = false;
    // Only a request that asks for logprobs has a ledger, and has probabilities computed.
    const top = request.logprobs;
    const ledger = top === undefined ? undefined : new LogprobLedger();
    const send = (text: string) => {
      const logprobs = ledger?.sent(text);
      if (text || logprobs?.length) onText(text, logprobs);
    };
    const emit = (text: string) => {
      ledger?.decoded(text);
      calls?.see(text);
      const out = stops.push(text);
      send(out.text);
      stopped = out.stopped;
    };
    const biases = logitBiases(request.sampling.logitBias ?? []);
    const tokenBias = biases.size > 0 ? tokenBiasOf(this.model, biases) : undefined;
    // A request has a response_format's grammar or its tool calls', never both (the API refuses both).
    const options = evaluateOptions(request, generated, grammarState, tokenBias);
    if (calls) options.grammarEvaluationState = () => calls.state();
    const typical = this.typicalSampling(sequence, request, options, biases);
    bans?.applyTo(sequence, generated);
    let input = prompt;
    try {
      if (request.echo && !signal.aborted) {
        input = await echoPrompt(sequence, prompt, read, request, this.tokenLogprobs, this.decoder());
      }
      if (signal.aborted) finishReason = "cancelled";
      else {
        // The echo (above) scores the prompt with every probability; the generated tokens need fewer.
        if (ledger) this.hooks.set(sequence, trimmingProbabilities(typical?.hook));
        const metadata = { probabilities: top !== undefined };
        const steps = sequence.evaluateWithMetadata(input, metadata, options);
        const constrained = () => grammarState !== undefined || calls?.state() !== undefined;
        for await (const step of withSamplingErrors(steps, () => takeSamplingFailure(this.context), constrained)) {
          const token = step.token;
          generated.push(token);
          if (ledger) ledger.token(this.tokenLogprobs.entry(token, probabilitiesOf(step), top!));
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
      if (typical || ledger) this.hooks.remove(sequence);
      typical?.dispose();
    }
    if (!stopped) emit(decoder.flush());
    if (stopped) finishReason = "stop";
    else send(stops.flush());
    const last = ledger?.finish();
    if (last?.length) onText("", last);
    return { finishReason, promptTokens: prompt.length, completionTokens: generated.length };
  }

  /** A decoder of the text that goes on after `after`. */
  private decoder(after: readonly Token[] = []): TokenTextDecoder {
    return new TokenTextDecoder(
      (tokens, last) => this.model.detokenize(tokens as Token[], false, last as Token[]),
      after,
    );
  }

  /** The grammar of the request's tool calls: in force from the start, or once the model writes the trigger. */
  private async toolCalls(request: GenerateRequest): Promise<ToolCallConstraint | undefined> {
    if (!request.toolCalls) return undefined;
    const { use, format } = request.toolCalls;
    const fromStart = use.choice !== "auto";
    const grammar = await toolCallGrammar(this.model.llama, use, format, fromStart ? "prefix" : "trigger");
    return new ToolCallConstraint(this.model, grammar, fromStart ? undefined : format.trigger);
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

/** What constrains a request's output: a response_format's grammar or its tool calls' (never both), and the tokens banned under them. */
interface Constraints {
  grammar: LlamaGrammar | undefined;
  calls: ToolCallConstraint | undefined;
  bans: GrammarTokenBans | undefined;
}

/** An adapter as this engine loads it: the engine's handle on its native weights. */
export interface LlamaEngineAdapter extends EngineAdapter {
  readonly lora: NativeLora;
}

/** A step's probabilities: there when the request asked (its metadata's `probabilities` is then true). */
function probabilitiesOf(step: object): Map<Token, number> {
  const probabilities = (step as { probabilities?: Map<Token, number> }).probabilities;
  if (probabilities === undefined) throw new Error("node-llama-cpp gave no probabilities for a token");
  return probabilities;
}
