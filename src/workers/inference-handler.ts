import type { TokenLogprob } from "../domain/logprobs.js";
import { parseModelName } from "../domain/model-name.js";
import { checkEmbeddingTarget, type InferencePayload, type ModelTarget } from "../jobs/jobs.js";
import { embeddingEvents, type FinishReason, type StreamEvent, type Usage } from "../requests/stream.js";
import type {
  EchoedPrompt,
  EngineContext,
  EngineModel,
  GenerateRequest,
  GenerateResult,
  OnText,
  ToolCallFormat,
  UserTemplate,
} from "./engine/engine.js";
import { codePoints } from "./engine/logprob-ledger.js";
import { ToolCallParser } from "./tool-call-parser.js";
import { UsageTally, usageOf } from "./usage-tally.js";

/** What the inference handler needs from the worker around it. */
export interface InferenceTarget {
  model: EngineModel;
  context: EngineContext;
}

export interface InferenceOutcome {
  finishReasons: FinishReason[];
  usage: Usage;
}

/** The storage key of the LoRA adapter a request runs with, if any. */
export function adapterKeyOf(payload: InferencePayload): string | undefined {
  if (payload.kind === "embedding") checkEmbeddingTarget(payload.model);
  return payload.model.adapter?.key;
}

/** An adapter's own chat template, owned by the adapter's account (its share of the template sandbox). */
function userTemplateOf(target: ModelTarget): UserTemplate | undefined {
  if (target.chatTemplate === undefined) return undefined;
  return { text: target.chatTemplate, owner: parseModelName(target.name)?.accountId ?? target.name };
}

/**
 * Runs one inference job and reports its events through `emit`, ending with
 * `done` (errors are thrown; the caller turns them into the `error` event).
 */
export async function runInference(
  payload: InferencePayload,
  target: InferenceTarget,
  signal: AbortSignal,
  emit: (event: StreamEvent) => void,
): Promise<InferenceOutcome> {
  if (payload.kind === "embedding") {
    const { vectors, promptTokens } = await target.model.embed(payload.inputs, signal);
    const usage = { promptTokens, completionTokens: 0 };
    for (const event of embeddingEvents(vectors)) emit(event);
    emit({ type: "done", choices: [], usage });
    return { finishReasons: [], usage };
  }

  const groups: { tokens: number[]; stop: string[]; toolCallFormat?: ToolCallFormat }[] =
    payload.kind === "completion"
      ? payload.prompts.map((prompt) => ({
          tokens: typeof prompt === "string" ? target.model.tokenize(prompt) : prompt,
          stop: [] as string[],
        }))
      : [await target.model.renderChat(payload.messages, userTemplateOf(payload.model), payload.tools?.tools)];
  const tools = payload.kind === "chat" ? payload.tools : undefined;
  // Each event of generated text says the request's usage by then (requests/stream.ts).
  const tally = new UsageTally(payload.n);
  const emitGenerated = (event: GeneratedEvent) => emit({ ...event, usage: tally.now() });

  // One failing choice stops its siblings.
  const local = new AbortController();
  const stopAll = () => local.abort();
  signal.addEventListener("abort", stopAll, { once: true });
  const runs: Promise<GenerateResult | ToolCallsResult>[] = [];
  groups.forEach((group, g) => {
    const format = group.toolCallFormat;
    for (let c = 0; c < payload.n; c++) {
      const index = g * payload.n + c;
      const request: GenerateRequest = {
        promptTokens: group.tokens,
        extraStop: group.stop,
        sampling: payload.sampling,
        express: payload.express,
        progress: tally.of(index),
        ...(payload.logprobs === undefined ? {} : { logprobs: payload.logprobs }),
        ...(tools && format ? { toolCalls: { use: tools, format } } : {}),
      };
      const token = (text: string, logprobs?: TokenLogprob[]) =>
        emitGenerated(logprobs ? { type: "token", index, text, logprobs } : { type: "token", index, text });
      const echo = payload.kind === "completion" && payload.echo === true ? payload.prompts[g] : undefined;
      // With tools the API refuses logprobs: a call's tokens have no place in the text's logprobs.
      const run =
        tools && format
          ? generateWithTools(target.context, request, c, local.signal, format, index, emitGenerated)
          : generateChoice(target.context, request, c, local.signal, token, echo);
      runs.push(
        run.catch((error: unknown) => {
          stopAll();
          throw error;
        }),
      );
    }
  });
  const results = await settleAll(runs).finally(() => signal.removeEventListener("abort", stopAll));
  const usage = usageOf(results, payload.n);
  const choices = results.map((r, index) => ({ index, finishReason: r.finishReason }));
  emit({ type: "done", choices, usage });
  return { finishReasons: choices.map((c) => c.finishReason), usage };
}

/** A choice that may call tools: its text goes through the parser, which tells calls from content. */
async function generateWithTools(
  context: EngineContext,
  request: GenerateRequest,
  choice: number,
  signal: AbortSignal,
  format: ToolCallFormat,
  index: number,
  emit: (event: GeneratedEvent) => void,
): Promise<GenerateResult | ToolCallsResult> {
  const parser = new ToolCallParser(format);
  const send = (parts: ReturnType<ToolCallParser["push"]>) => {
    for (const part of parts) {
      if (part.kind === "text") emit({ type: "token", index, text: part.text });
      else if (part.kind === "call")
        emit({ type: "tool_call", index, call: part.call, callId: part.id, name: part.name });
      else emit({ type: "tool_arguments", index, call: part.call, text: part.text });
    }
  };
  const result = await generateChoice(context, request, choice, signal, (text) => send(parser.push(text)));
  send(parser.flush());
  return parser.callCount > 0 && result.finishReason === "stop" ? { ...result, finishReason: "tool_calls" } : result;
}

/** An event of generated text, before the tally's usage is put on it. */
type GeneratedEvent = Extract<StreamEvent, { type: "token" | "tool_call" | "tool_arguments" }>;

type ToolCallsResult = Omit<GenerateResult, "finishReason"> & { finishReason: "tool_calls" };

/**
 * Generates one choice. With `echo` (the prompt as the request gave it), the choice's text starts
 * with the prompt as the model read it: a text prompt read whole as it was given, else the model's
 * own text of the tokens it read (token IDs detokenized, a truncated prompt's kept part); with
 * logprobs, its tokens come first too, and the generated tokens' offsets count from its end.
 */
function generateChoice(
  context: EngineContext,
  request: GenerateRequest,
  choice: number,
  signal: AbortSignal,
  onText: OnText,
  echo?: string | readonly number[],
): Promise<GenerateResult> {
  // Choices of one request differ by seed; with a seed given they stay reproducible.
  const { sampling } = request;
  const seeded = sampling.seed === undefined ? sampling : { ...sampling, seed: (sampling.seed + choice) % 2 ** 32 };
  if (echo === undefined) return context.generate({ ...request, sampling: seeded }, signal, onText);
  let shift = 0;
  const echoed = (prompt: EchoedPrompt) => {
    const text = typeof echo === "string" && !prompt.truncated ? echo : prompt.text;
    shift = codePoints(text);
    if (text || prompt.logprobs?.length) onText(text, prompt.logprobs);
  };
  const shifted: OnText = (text, logprobs) =>
    onText(
      text,
      logprobs?.map((l) => ({ ...l, offset: l.offset + shift })),
    );
  return context.generate({ ...request, sampling: seeded, echo: echoed }, signal, shifted);
}

/** Like Promise.all, but waits for every run to end before rethrowing the first failure. */
async function settleAll<T>(runs: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(runs);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
