/**
 * The most tokens a request may use, known before any tokenizer runs, for the tokens-per-minute
 * limit (services/admission.ts corrects it to the usage at the end). A prompt has at most as
 * many tokens as UTF-8 bytes (plus a BOS), since the tokenizers Hearth serves (byte-level BPE,
 * and the bigram demo's bytes) give each token at least one byte; a chat template adds its own
 * turn markers, allowed for per message.
 */

const TEMPLATE_TOKENS_PER_MESSAGE = 16;

const bytes = (text: string) => Buffer.byteLength(text, "utf8") + 1;

/** Each prompt once (as usage counts it) plus max_tokens for each of its n choices. */
export function completionEstimate(prompts: readonly string[], n: number, maxTokens: number): number {
  return prompts.reduce((sum, prompt) => sum + bytes(prompt) + n * maxTokens, 0);
}

/** The conversation once, plus max_tokens (else the whole context) for each of the n choices. */
export function chatEstimate(messages: readonly { content: string }[], n: number, maxTokens: number): number {
  const prompt = messages.reduce((sum, m) => sum + bytes(m.content) + TEMPLATE_TOKENS_PER_MESSAGE, 0);
  return prompt + n * maxTokens;
}

export function embeddingEstimate(inputs: readonly string[]): number {
  return inputs.reduce((sum, input) => sum + bytes(input), 0);
}
