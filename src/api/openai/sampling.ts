import { AppError } from "../../errors.js";
import type { Sampling } from "../../domain/generation.js";
import type { ChatRequest, CompletionRequest } from "../contract/openai/requests.js";
import type { ResolvedModel } from "../services/model-resolver.js";
import { toConstraint } from "./response-format.js";

/** OpenAI sampling fields (response_format among them) → Hearth's. `defaultMaxTokens` null means "until the context is full". */
export function toSampling(req: CompletionRequest | ChatRequest, maxTokens: number | null): Sampling {
  const constraint = toConstraint(req.response_format, req.stop);
  if (constraint) refuseTypicalUnderGrammar(req.typical_p, "response_format");
  return {
    maxTokens,
    temperature: req.temperature ?? 1,
    topP: req.top_p ?? undefined,
    topK: req.top_k ?? undefined,
    minP: req.min_p ?? undefined,
    seed: req.seed ?? undefined,
    stop: req.stop,
    presencePenalty: req.presence_penalty ?? undefined,
    frequencyPenalty: req.frequency_penalty ?? undefined,
    repetitionPenalty: req.repetition_penalty ?? undefined,
    constraint,
    typicalP: req.typical_p ?? undefined,
    onContextOverflow: req.context_length_exceeded_behavior ?? undefined,
    logitBias:
      req.logit_bias == null ? undefined : Object.entries(req.logit_bias).map(([token, bias]) => [Number(token), bias]),
  };
}

/**
 * Typical sampling measures the model's own distribution, which a grammar (response_format's,
 * or tool calls') cuts down: the typical set could hold no token the grammar allows.
 */
export function refuseTypicalUnderGrammar(typicalP: number | null | undefined, beside: string): void {
  if (typicalP != null && typicalP < 1) {
    throw new AppError("invalid_request", `typical_p cannot be combined with ${beside}.`, { param: "typical_p" });
  }
}

/**
 * max_tokens against the context a worker gives each request (HEARTH_CONTEXT_SIZE, capped at
 * the model's own), before the request is queued: a request that cannot fit whatever its
 * prompt is refused here, naming the numbers. The worker checks prompt plus max_tokens.
 */
export function checkMaxTokens(
  maxTokens: number | null,
  param: string,
  modelName: string,
  model: ResolvedModel,
  contextSize: number,
): void {
  if (maxTokens === null) return;
  const context = Math.min(contextSize, model.contextLength ?? contextSize);
  if (maxTokens < context) return;
  throw new AppError(
    "context_length_exceeded",
    `${param} is ${maxTokens}, but ${modelName} has a context of ${context} tokens per request, the prompt included; ` +
      `ask for at most ${context - 1}.`,
    { param },
  );
}
