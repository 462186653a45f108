import type { LlamaModel, Token } from "node-llama-cpp";
import { AppError } from "../../errors.js";
import type { GenerateRequest } from "./engine.js";

/** The tokens to evaluate: the model's BOS first where it wants one; never empty. */
export function promptTokens(model: LlamaModel, tokens: number[]): Token[] {
  const bos = model.tokens.bos;
  const wantsBos = model.tokens.shouldPrependBosToken && bos !== null;
  if (wantsBos && tokens[0] !== bos) return [bos, ...tokens] as Token[];
  if (tokens.length > 0) return tokens as Token[];
  if (bos !== null) return [bos];
  throw new AppError("invalid_request", "The prompt is empty.", { param: "prompt" });
}

/**
 * With onContextOverflow "truncate", the prompt without as much of its beginning as keeps
 * room for maxTokens in a context of `contextSize` (its BOS kept); with maxTokens null, a
 * prompt that fills the context keeps its last half, the other half left to generate.
 * Otherwise the prompt as it is.
 */
export function fittedPrompt(
  model: LlamaModel,
  contextSize: number,
  prompt: Token[],
  sampling: GenerateRequest["sampling"],
): Token[] {
  if (sampling.onContextOverflow !== "truncate") return prompt;
  const room =
    sampling.maxTokens === null
      ? prompt.length < contextSize
        ? prompt.length
        : Math.floor(contextSize / 2)
      : contextSize - sampling.maxTokens;
  if (prompt.length <= room) return prompt;
  const bos = model.tokens.bos;
  const keepBos = bos !== null && prompt[0] === bos && model.tokens.shouldPrependBosToken;
  // Nothing of the prompt would be left: the error says why.
  if (room <= (keepBos ? 1 : 0)) return prompt;
  return keepBos ? [prompt[0]!, ...prompt.slice(prompt.length - room + 1)] : prompt.slice(prompt.length - room);
}
