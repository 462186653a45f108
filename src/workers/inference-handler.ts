import { parseModelName } from "../domain/model-name.js";
import { checkEmbeddingTarget, type InferencePayload, type ModelTarget } from "../jobs/jobs.js";
import { embeddingEvents, type FinishReason, type StreamEvent } from "../requests/stream.js";
import type { EngineContext, EngineModel, GenerateRequest, GenerateResult, UserTemplate } from "./engine/engine.js";

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
      ? payload.prompts.map((prompt) => ({
          tokens: typeof prompt === "string" ? target.model.tokenize(prompt) : prompt,
          stop: [] as string[],
        }))
      : [await target.model.renderChat(payload.messages, userTemplateOf(payload.model))];

  // One failing choice stops its siblings.
  const local = new AbortController();
  const stopAll = () => local.abort();
  signal.addEventListener("abort", stopAll, { once: true });
  const runs: Promise<GenerateResult>[] = [];
  groups.forEach((group, g) => {
    for (let c = 0; c < payload.n; c++) {
      const index = g * payload.n + c;
      runs.push(
        generateChoice(
          target.context,
          { promptTokens: group.tokens, extraStop: group.stop, sampling: payload.sampling, express: payload.express },
          c,
          local.signal,
          (text) => emit({ type: "token", index, text }),
        ).catch((error: unknown) => {
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

function generateChoice(
  context: EngineContext,
  request: GenerateRequest,
  choice: number,
  signal: AbortSignal,
  onText: (text: string) => void,
): Promise<GenerateResult> {
  // Choices of one request differ by seed; with a seed given they stay reproducible.
  const { sampling } = request;
  const seeded = sampling.seed === undefined ? sampling : { ...sampling, seed: (sampling.seed + choice) % 2 ** 32 };
  return context.generate({ ...request, sampling: seeded }, signal, onText);
}

/** Like Promise.all, but waits for every run to end before rethrowing the first failure. */
async function settleAll<T>(runs: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(runs);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
