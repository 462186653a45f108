/**
 * Log probabilities of tokens, as a generation reports them (docs/api.md, "Log probabilities").
 *
 * A token's log probability is the natural log of the probability the model gave it at its
 * position, after the request's temperature and penalties and before any truncation (top_k,
 * top_p, min_p). At temperature 0 (greedy) it is the distribution at temperature 1.
 */

/** Alternatives per token on /v1/chat/completions (`top_logprobs`), as OpenAI allows. */
export const MAX_TOP_LOGPROBS = 20;
/** Alternatives per token on /v1/completions (`logprobs`), as OpenAI allows. */
export const MAX_COMPLETION_LOGPROBS = 5;

/** What OpenAI reports for a probability too small to have a logarithm in float32 (it rounded to 0). */
export const UNLIKELY_LOGPROB = -9999;

/** One token as logprobs show it. */
export interface LogprobToken {
  /** The token's text; bytes that are not whole UTF-8 characters are written `\xNN`. */
  token: string;
  /** The token's bytes (what it adds to the text, as UTF-8); null when the model's vocabulary cannot say. */
  bytes: number[] | null;
  /** Null only for a token nothing came before (the first token of an echoed prompt). */
  logprob: number | null;
}

/** A token of the text, with the most likely tokens at its position. */
export interface TokenLogprob extends LogprobToken {
  /** The most likely tokens at its position, most likely first (as many as were asked for). */
  top: LogprobToken[];
  /** Where the token's text starts in its choice's text, in Unicode code points. */
  offset: number;
}

/** The log of a probability as reported: UNLIKELY_LOGPROB when it rounded to 0. */
export function logprobOf(probability: number): number {
  return probability > 0 ? Math.log(probability) : UNLIKELY_LOGPROB;
}
