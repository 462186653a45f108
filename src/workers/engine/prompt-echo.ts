import type { ControlledEvaluateInputItem, LlamaContextSequence, Token } from "node-llama-cpp";
import type { TokenLogprob } from "../../domain/logprobs.js";
import type { GenerateRequest } from "./engine.js";
import { LogprobLedger } from "./logprob-ledger.js";
import { EXPRESS_PRIORITY, OTHER_PRIORITY } from "./step-gang.js";
import type { TokenLogprobs } from "./token-logprobs.js";
import type { TokenTextDecoder } from "./token-text.js";

/**
 * Prompt positions decoded per call when scoring a prompt: llama.cpp keeps the logits of every
 * position of a batch that asks for them (vocabulary × positions floats), so a long prompt is
 * scored in slices to bound that buffer.
 */
const SCORED_PER_BATCH = 64;

/** What the engine read of a request's prompt. */
export interface ReadPrompt {
  /** Where the request's own tokens start in what was read (after a BOS the engine put in front). */
  from: number;
  /** Whether the prompt's beginning was cut to fit the context. */
  truncated: boolean;
}

/**
 * Gives `request.echo` the prompt as the model read it (`prompt`, fitted to the context): the
 * text of its tokens from `read.from` on and, with logprobs, those tokens scored. Returns the
 * tokens generation goes on from: the whole prompt, or after scoring only its last token (the
 * rest is in the sequence then).
 */
export async function echoPrompt(
  sequence: LlamaContextSequence,
  prompt: Token[],
  read: ReadPrompt,
  request: GenerateRequest,
  tokens: TokenLogprobs,
  decoder: TokenTextDecoder,
): Promise<Token[]> {
  if (request.logprobs === undefined) {
    request.echo?.({ text: decoder.text(prompt.slice(read.from)), truncated: read.truncated });
    return prompt;
  }
  const scored = await scorePrompt(sequence, prompt, read.from, request, tokens, decoder);
  request.echo?.({ ...scored, truncated: read.truncated });
  return prompt.slice(-1);
}

/**
 * Decodes all of `prompt` but its last token into the sequence, with the distribution after
 * each position, and returns the text of the prompt's tokens from `from` on and their log
 * probabilities given the ones before them (the first token has none: its logprob is null).
 * The distribution is the request's temperature with no truncation (temperature 1 for greedy
 * requests), and no penalties: Hearth penalises generated tokens only.
 */
async function scorePrompt(
  sequence: LlamaContextSequence,
  prompt: readonly Token[],
  from: number,
  request: GenerateRequest,
  tokens: TokenLogprobs,
  decoder: TokenTextDecoder,
): Promise<{ text: string; logprobs: TokenLogprob[] }> {
  const top = request.logprobs ?? 0;
  const options = { temperature: request.sampling.temperature, topK: 0, topP: 1 };
  const evaluationPriority = request.express === true ? EXPRESS_PRIORITY : OTHER_PRIORITY;
  const ledger = new LogprobLedger();
  let text = "";
  const decoded = (piece: string) => {
    ledger.decoded(piece);
    text += piece;
  };
  const add = (token: Token, entry: Omit<TokenLogprob, "offset">) => {
    ledger.token(entry);
    decoded(decoder.push(token));
  };
  if (from === 0) add(prompt[0]!, { ...tokens.piece(prompt[0]!), logprob: null, top: [] });
  for (let start = 0; start < prompt.length - 1; start += SCORED_PER_BATCH) {
    const slice = prompt.slice(start, Math.min(start + SCORED_PER_BATCH, prompt.length - 1));
    const input: ControlledEvaluateInputItem[] = slice.map((token) => [
      token,
      { generateNext: { probabilities: true, options } },
    ]);
    const results = await sequence.controlledEvaluate(input, { evaluationPriority });
    slice.forEach((_, i) => {
      const position = start + i + 1;
      const probabilities = results[i]?.next.probabilities;
      if (probabilities === undefined) throw new Error("node-llama-cpp gave no probabilities for a prompt token");
      if (position >= from) add(prompt[position]!, tokens.entry(prompt[position]!, probabilities, top));
    });
  }
  decoded(decoder.flush());
  // The prompt's text is all "sent" (it is echoed whole): every token comes out, with its offset.
  return { text, logprobs: [...ledger.sent(text), ...ledger.finish()] };
}
