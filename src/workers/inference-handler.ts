import type { TokenLogprob } from "../domain/logprobs.js";
import { parseModelName } from "../domain/model-name.js";
import { checkEmbeddingTarget, type InferencePayload, type ModelTarget } from "../jobs/jobs.js";
import { embeddingEvents, type FinishReason, type StreamEvent } from "../requests/stream.js";
import type {
  EngineContext,
  EngineModel,
  GenerateRequest,
  GenerateResult,
  OnText,
  UserTemplate,
} from "./engine/engine.js";
import { codePoints } from "./engine/logprob-ledger.js";

/** What the inference handler needs from the worker around it. */
export interface InferenceTarget {
  model: EngineModel;
  context: EngineContext;
}

export interface InferenceOutcome {
  finishReasons: FinishReason[];
  usage: { promptTokens: number; completionTokens: number };
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

  const groups =
    payload.kind === "completion"
      ? payload.prompts.map((prompt) => ({ tokens: target.model.tokenize(prompt), stop: [] as string[] }))
      : [await target.model.renderChat(payload.messages, userTemplateOf(payload.model))];
  const echo = payload.kind === "completion" && payload.echo === true;

  // One failing choice stops its siblings.
  const local = new AbortController();
  const stopAll = () => local.abort();
  signal.addEventListener("abort", stopAll, { once: true });
  const runs: Promise<GenerateResult>[] = [];
  groups.forEach((group, g) => {
    for (let c = 0; c < payload.n; c++) {
      const index = g * payload.n + c;
      const request: GenerateRequest = {
        promptTokens: group.tokens,
        extraStop: group.stop,
        sampling: payload.sampling,
        express: payload.express,
        ...(payload.logprobs === undefined ? {} : { logprobs: payload.logprobs }),
      };
      const token = (text: string, logprobs?: TokenLogprob[]) =>
        emit(logprobs ? { type: "token", index, text, logprobs } : { type: "token", index, text });
      const prompt = echo && payload.kind === "completion" ? payload.prompts[g]! : undefined;
      runs.push(
        generateChoice(target.context, request, c, local.signal, token, prompt).catch((error: unknown) => {
          stopAll();
          throw error;
        }),
      );
    }
  });
  const results = await settleAll(runs).finally(() => signal.removeEventListener("abort", stopAll));
  const usage = {
    // As OpenAI counts: each prompt once, however many choices it has.
    promptTokens: results.filter((_, i) => i % payload.n === 0).reduce((sum, r) => sum + r.promptTokens, 0),
    completionTokens: results.reduce((sum, r) => sum + r.completionTokens, 0),
  };
  const choices = results.map((r, index) => ({ index, finishReason: r.finishReason }));
  emit({ type: "done", choices, usage });
  return { finishReasons: choices.map((c) => c.finishReason), usage };
}

/**
 * Generates one choice. With `echo` (the prompt's text), the choice's text starts with it: at
 * once, or with logprobs once the prompt's tokens are scored, and the generated tokens' offsets
 * then count from the prompt's end.
 */
function generateChoice(
  context: EngineContext,
  request: GenerateRequest,
  choice: number,
  signal: AbortSignal,
  onText: OnText,
  echo?: string,
): Promise<GenerateResult> {
  // Choices of one request differ by seed; with a seed given they stay reproducible.
  const { sampling } = request;
  const seeded = sampling.seed === undefined ? sampling : { ...sampling, seed: (sampling.seed + choice) % 2 ** 32 };
  if (echo === undefined) return context.generate({ ...request, sampling: seeded }, signal, onText);
  if (request.logprobs === undefined && echo) onText(echo);
  const shift = codePoints(echo);
  const shifted: OnText = (text, logprobs) =>
    onText(
      text,
      logprobs?.map((l) => ({ ...l, offset: l.offset + shift })),
    );
  const promptLogprobs = request.logprobs === undefined ? undefined : (prompt: TokenLogprob[]) => onText(echo, prompt);
  return context.generate({ ...request, sampling: seeded, promptLogprobs }, signal, shifted);
}

/** Like Promise.all, but waits for every run to end before rethrowing the first failure. */
async function settleAll<T>(runs: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(runs);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
