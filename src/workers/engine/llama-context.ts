import type { LlamaContext, LlamaContextSequence, LlamaModel, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import { AppError } from "../../errors.js";
import { StopMatcher } from "../stop-matcher.js";
import type { EngineContext, GenerateRequest, GenerateResult } from "./engine.js";
import { TokenTextDecoder } from "./token-text.js";

/**
 * One llama.cpp context: a fixed set of sequences evaluated together in batches.
 * Requests take a free sequence, or wait for one in arrival order.
 */
export class LlamaEngineContext implements EngineContext {
  private readonly free: LlamaContextSequence[];
  private readonly waiting: ((sequence: LlamaContextSequence) => void)[] = [];

  constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
  ) {
    this.free = Array.from({ length: context.totalSequences }, () => context.getSequence());
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  async generate(request: GenerateRequest, signal: AbortSignal, onText: (text: string) => void): Promise<GenerateResult> {
    const prompt = this.promptTokens(request.promptTokens);
    const available = this.contextSize - prompt.length;
    const maxTokens = request.sampling.maxTokens ?? available;
    if (available <= 0 || maxTokens > available) {
      throw new AppError(
        "invalid_request",
        `This model's context holds ${this.contextSize} tokens per request; the prompt has ${prompt.length} tokens` +
          (request.sampling.maxTokens === null ? "." : ` and max_tokens asks for ${maxTokens} more.`) +
          " Shorten the prompt or lower max_tokens.",
        { param: available <= 0 ? "prompt" : "max_tokens" },
      );
    }
    const sequence = await this.acquire(signal);
    if (!sequence) return { finishReason: "cancelled", promptTokens: prompt.length, completionTokens: 0 };
    try {
      await sequence.clearHistory();
      return await this.run(sequence, prompt, maxTokens, request, signal, onText);
    } finally {
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
    if (!signal.aborted) {
      for await (const token of sequence.evaluate(prompt, evaluateOptions(request, generated))) {
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
      }
    } else {
      finishReason = "cancelled";
    }
    if (!stopped) emit(decoder.flush());
    if (stopped) finishReason = "stop";
    else {
      const rest = stops.flush();
      if (rest) onText(rest);
    }
    return { finishReason, promptTokens: prompt.length, completionTokens: generated.length };
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

  private acquire(signal: AbortSignal): Promise<LlamaContextSequence | undefined> {
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve) => {
      const take = (s: LlamaContextSequence) => {
        signal.removeEventListener("abort", onAbort);
        resolve(s);
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(take);
        if (at !== -1) this.waiting.splice(at, 1);
        resolve(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(take);
    });
  }

  private release(sequence: LlamaContextSequence) {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
  }
}

function evaluateOptions(request: GenerateRequest, generated: Token[]): SequenceEvaluateOptions {
  const s = request.sampling;
  const options: SequenceEvaluateOptions = { temperature: s.temperature };
  if (s.temperature > 0) {
    if (s.topK !== undefined) options.topK = s.topK;
    if (s.topP !== undefined) options.topP = s.topP;
    if (s.seed !== undefined) options.seed = s.seed;
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
