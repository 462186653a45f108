import type { TextOrTokens } from "../../domain/generation.js";

/**
 * The most tokens a request may use, known before any tokenizer runs, for the tokens-per-minute
 * limit (services/admission.ts corrects it to the usage at the end). A prompt has at most as
 * many tokens as UTF-8 bytes (plus a BOS), since the tokenizers Hearth serves (byte-level BPE,
 * and the bigram demo's bytes) give each token at least one byte; a chat template adds its own
 * turn markers, allowed for per message. A prompt given as token IDs counts its IDs.
 */

const TEMPLATE_TOKENS_PER_MESSAGE = 16;

const bytes = (text: string) => Buffer.byteLength(text, "utf8") + 1;
/** Token IDs are counted as they are. */
const tokensOf = (input: TextOrTokens) => (typeof input === "string" ? bytes(input) : input.length + 1);

/** Each prompt once (as usage counts it) plus max_tokens for each of its n choices. */
export function completionEstimate(prompts: readonly TextOrTokens[], n: number, maxTokens: number): number {
  return prompts.reduce((sum, prompt) => sum + tokensOf(prompt) + n * maxTokens, 0);
}

/** The conversation once, plus max_tokens (else the whole context) for each of the n choices. */
export function chatEstimate(messages: readonly { content: string }[], n: number, maxTokens: number): number {
  const prompt = messages.reduce((sum, m) => sum + bytes(m.content) + TEMPLATE_TOKENS_PER_MESSAGE, 0);
  return prompt + n * maxTokens;
}

export function embeddingEstimate(inputs: readonly TextOrTokens[]): number {
  return inputs.reduce((sum, input) => sum + tokensOf(input), 0);
}
