import { UNLIKELY_LOGPROB, type LogprobToken, type TokenLogprob } from "../../domain/logprobs.js";
import { AppError } from "../../errors.js";
import type { ChatRequest } from "../contract/openai/requests.js";
import type { ChatLogprobs, CompletionLogprobs } from "../contract/openai/responses.js";

/**
 * Token logprobs in OpenAI's two shapes: chat's `logprobs.content` (a list of tokens, each with
 * its alternatives) and the completions' legacy columns (tokens, token_logprobs, top_logprobs,
 * text_offset). The worker sends the tokens (requests/stream.ts); these only reshape them.
 */

/** The alternatives per token a chat request asks for (undefined: no logprobs); top_logprobs needs logprobs, as OpenAI says. */
export function chatTopLogprobs(req: ChatRequest): number | undefined {
  if (req.logprobs === true) return req.top_logprobs ?? 0;
  if (req.top_logprobs != null) {
    throw new AppError("invalid_request", "top_logprobs needs logprobs: true.", { param: "top_logprobs" });
  }
  return undefined;
}

const chatToken = (t: LogprobToken) => ({ token: t.token, logprob: t.logprob ?? UNLIKELY_LOGPROB, bytes: t.bytes });

export function chatLogprobs(tokens: readonly TokenLogprob[]): NonNullable<ChatLogprobs> {
  return {
    content: tokens.map((t) => ({ ...chatToken(t), top_logprobs: t.top.map(chatToken) })),
    refusal: null,
  };
}

/**
 * The legacy shape. A token's `top_logprobs` holds its alternatives and the token itself (OpenAI:
 * "up to logprobs + 1"); two tokens of the same text keep the likelier's entry. The first token
 * of an echoed prompt has null for both its logprob and its alternatives.
 */
export function completionLogprobs(tokens: readonly TokenLogprob[]): NonNullable<CompletionLogprobs> {
  return {
    tokens: tokens.map((t) => t.token),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => {
      if (t.logprob === null) return null;
      const top: Record<string, number> = Object.create(null);
      for (const alternative of [...t.top, t]) top[alternative.token] ??= alternative.logprob ?? UNLIKELY_LOGPROB;
      return top;
    }),
    text_offset: tokens.map((t) => t.offset),
  };
}
