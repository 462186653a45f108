import type { Sampling } from "../../queues/jobs.js";
import type { ChatRequest, CompletionRequest } from "../contract/openai/requests.js";

/** OpenAI sampling fields → Hearth's. `defaultMaxTokens` null means "until the context is full". */
export function toSampling(req: CompletionRequest | ChatRequest, maxTokens: number | null): Sampling {
  return {
    maxTokens,
    temperature: req.temperature ?? 1,
    topP: req.top_p ?? undefined,
    topK: req.top_k ?? undefined,
    seed: req.seed ?? undefined,
    stop: req.stop,
    presencePenalty: req.presence_penalty ?? undefined,
    frequencyPenalty: req.frequency_penalty ?? undefined,
    repetitionPenalty: req.repetition_penalty ?? undefined,
  };
}
