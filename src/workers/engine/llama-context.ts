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
import type { AdapterBatching, LlamaEngineAdapter, NativeLora } from "./adapter-batching.js";
import type { SampleHooks } from "./sample-hooks.js";
import { logitBiases, tokenBiasOf } from "./token-bias.js";
import { TypicalSampling } from "./typical-sampling.js";
import { withGreedyFloor } from "./greedy-floor.js";
import { checkTokenIds } from "./vocabulary-check.js";
import type { StepGang } from "./step-gang.js";
import { holdsPrompt, type PromptCache } from "./prompt-cache.js";
import { SequenceWaiters, type Want } from "./sequence-waiters.js";
import { fittedPrompt, promptTokens } from "./prompt-fit.js";
import type { EngineAdapter, EngineContext, GenerateRequest, GenerateResult, OnText } from "./engine.js";
import { LogprobLedger } from "./logprob-ledger.js";
import { trimmingProbabilities } from "./probability-trim.js";
import { echoPrompt, type ReadPrompt } from "./prompt-echo.js";
import { TokenLogprobs } from "./token-logprobs.js";
import type { LlamaGrammars } from "./llama-grammars.js";
import { GrammarTokenBans } from "./grammar-token-bans.js";
import { samplingError } from "./sampling-error.js";
import { driveSequence, type DrivenStep } from "./sequence-driver.js";
import { takeSamplingFailure } from "./sampling-guard.js";
import { evaluateOptions } from "./evaluate-options.js";
import { ToolCallConstraint } from "./tool-call-constraint.js";
import { TokenTextDecoder } from "./token-text.js";
import { toolCallGrammar } from "./tool-call-grammar.js";

/**
 * One llama.cpp context: a fixed number of sequences evaluated together in batches.
 * Each request takes a sequence, or waits for one in arrival order; express requests
 * wait ahead of the others (the express lane, docs/security.md).
 *
 * A sequence outlives its request: its cells stay in the prompt cache (prompt-cache.ts),
 * and the next request whose prompt starts the same way evaluates only the rest. Taking a
 * used sequence erases its cells past the shared prefix without the context's lock, which
 * the batch loop holds while others generate (cell-eraser.ts): it waits for one decode at most.
 */
export class LlamaEngineContext implements EngineContext {
  /** Requests waiting for a sequence: express ones are served first. */
  private readonly waiting = new SequenceWaiters((want) => this.take(want));
  /** Tokens as logprobs show them, for requests that ask. */
  private readonly tokenLogprobs: TokenLogprobs;

  constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    /** The context's batch strategy: keeps the generating sequences in step. */
    private readonly gang: StepGang,
    /** Its sequences between requests, with the cells they keep. */
    private readonly cache: PromptCache,
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

  get adapterSwitches(): number | undefined {
    return this.batching?.switches;
  }

  async generate(asked: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult> {
    const request = withGreedyFloor(asked);
    checkTokenIds(request.promptTokens, this.vocabularySize, "prompt");
    checkTokenIds(
      (request.sampling.logitBias ?? []).map(([token]) => token),
      this.vocabularySize,
      "logit_bias",
    );
    const given = promptTokens(this.model, request.promptTokens);
    const prompt = fittedPrompt(this.model, this.contextSize, given, request.sampling);
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
    const want: Want = {
      prompt,
      adapter: request.adapter?.path,
      // An echo with logprobs scores every prompt position: none of its cells can be taken as read.
      reuse: !(request.echo && request.logprobs !== undefined),
    };
    const taken = await this.waiting.acquire(want, signal, express);
    if (!taken) return { finishReason: "cancelled", promptTokens: prompt.length, cachedTokens: 0, completionTokens: 0 };
    const { sequence } = taken;
    try {
      await taken.ready;
    } catch (error) {
      this.release(sequence, want.adapter, true);
      throw error;
    }
    let failed = true;
    this.gang.enter();
    try {
      this.batching?.assign(sequence, lora);
      const result = await this.run(taken, prompt, read, maxTokens, request, { grammar, calls, bans }, signal, onText);
      failed = false;
      return result;
    } finally {
      this.gang.leave();
      this.batching?.release(sequence);
      this.release(sequence, want.adapter, failed || !holdsPrompt(sequence, prompt));
    }
  }

  private async run(
    { sequence, reused }: { sequence: LlamaContextSequence; reused: number },
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
    const unban = bans?.applyTo(sequence, generated);
    // The cached cells are the prompt's first `reused` tokens: evaluation goes on after them.
    let input = prompt.slice(reused);
    const progress = (completionTokens: number) =>
      request.progress?.({ promptTokens: prompt.length, cachedTokens: reused, completionTokens });
    progress(0);
    try {
      if (request.echo && !signal.aborted) {
        input = (await echoPrompt(sequence, prompt, read, request, this.tokenLogprobs, this.decoder())).slice(reused);
      }
      if (signal.aborted) finishReason = "cancelled";
      else {
        // The echo (above) scores the prompt with every probability; the generated tokens need fewer.
        if (ledger) this.hooks.set(sequence, trimmingProbabilities(typical?.hook));
        const constrained = () => grammarState !== undefined || calls?.state() !== undefined;
        const step = ({ token, probabilities }: DrivenStep) => {
          generated.push(token);
          progress(generated.length);
          // The driver gives probabilities with every step of a request that asks for logprobs.
          if (ledger) ledger.token(this.tokenLogprobs.entry(token, probabilities!, top!));
          emit(decoder.push(token));
          if (stopped) return false;
          if (signal.aborted) {
            finishReason = "cancelled";
            return false;
          }
          if (generated.length >= maxTokens) {
            finishReason = "length";
            return false;
          }
          return true;
        };
        try {
          await driveSequence(sequence, input, options, top !== undefined, step);
        } catch (error) {
          throw samplingError(error, takeSamplingFailure(this.context), constrained());
        }
      }
    } finally {
      unban?.();
      if (typical || ledger) this.hooks.remove(sequence);
      typical?.dispose();
    }
    if (!stopped) emit(decoder.flush());
    if (stopped) finishReason = "stop";
    else send(stops.flush());
    const last = ledger?.finish();
    if (last?.length) onText("", last);
    return { finishReason, promptTokens: prompt.length, cachedTokens: reused, completionTokens: generated.length };
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

  private take(want: Want) {
    if (this.context.disposed) return undefined;
    return this.cache.take(want.prompt, want.adapter, want.reuse);
  }

  /** The sequence goes back to the cache; the longest-waiting request takes one (express ones first). */
  private release(sequence: LlamaContextSequence, adapter: string | undefined, failed: boolean) {
    this.cache.put(sequence, adapter, failed);
    this.waiting.serve();
  }

  async dispose(): Promise<void> {
    this.cache.drop();
    await this.context.dispose();
  }
}

/** What constrains a request's output: a response_format's grammar or its tool calls' (never both), and the tokens banned under them. */
interface Constraints {
  grammar: LlamaGrammar | undefined;
  calls: ToolCallConstraint | undefined;
  bans: GrammarTokenBans | undefined;
}
