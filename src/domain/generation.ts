import { z } from "zod";
import { MAX_LOGIT_BIAS, MAX_SEED, MAX_STOP_CHARS, MAX_STOP_SEQUENCES, MAX_TOKENS } from "./sampling-limits.js";

/**
 * What a generation asks for, in Hearth's own words (not OpenAI's): how to sample, and a chat's
 * messages. The HTTP routes make them from a request, the job registry carries them to a
 * worker (which validates every job against these schemas), the engine generates from them.
 */

export const samplingSchema = z.object({
  /** Tokens to generate; null means "until the context is full". */
  maxTokens: z.number().int().positive().max(MAX_TOKENS).nullable(),
  temperature: z.number().min(0).max(2),
  topP: z.number().gt(0).max(1).optional(),
  topK: z.number().int().min(0).optional(),
  /** Tokens less likely than minP × the most likely one's probability are left out. */
  minP: z.number().min(0).max(1).optional(),
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  stop: z.array(z.string().min(1).max(MAX_STOP_CHARS)).max(MAX_STOP_SEQUENCES),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  repetitionPenalty: z.number().gt(0).max(10).optional(),
  /**
   * Locally typical sampling: only the tokens whose surprisal is nearest the distribution's
   * entropy, as many as make up this much probability, may be chosen. 1 (or absent) is off.
   */
  typicalP: z.number().gt(0).max(1).optional(),
  /**
   * A prompt too long for the context with maxTokens: "error" (the default) refuses it,
   * "truncate" drops its beginning until it fits (see the engine's generate).
   */
  onContextOverflow: z.enum(["error", "truncate"]).optional(),
  /** [token id, bias]: the bias is added to the token's logit before sampling; -100 bans it. */
  logitBias: z
    .array(z.tuple([z.number().int().min(0), z.number().min(-100).max(100)]))
    .max(MAX_LOGIT_BIAS)
    .optional(),
});
export type Sampling = z.infer<typeof samplingSchema>;

/** A prompt or an embedding input: text, or token IDs of the model's vocabulary (checked by the worker). */
export const textOrTokensSchema = z.union([z.string(), z.array(z.number().int().min(0)).min(1).max(MAX_TOKENS)]);
export type TextOrTokens = z.infer<typeof textOrTokensSchema>;

export const chatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;
