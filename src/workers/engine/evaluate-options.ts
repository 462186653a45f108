import { randomInt } from "node:crypto";
import type { LlamaGrammarEvaluationState, SequenceEvaluateOptions, Token, TokenBias } from "node-llama-cpp";
import type { GenerateRequest } from "./engine.js";
import { EXPRESS_PRIORITY, OTHER_PRIORITY } from "./step-gang.js";

/**
 * A request's sampling as node-llama-cpp's evaluate options: temperature, truncation, seed,
 * penalties over the generated tokens, its logit biases and its grammar's state.
 */
export function evaluateOptions(
  request: GenerateRequest,
  generated: Token[],
  grammarEvaluationState: LlamaGrammarEvaluationState | undefined,
  tokenBias: TokenBias | undefined,
): SequenceEvaluateOptions {
  const s = request.sampling;
  const options: SequenceEvaluateOptions = {
    temperature: s.temperature,
    evaluationPriority: request.express === true ? EXPRESS_PRIORITY : OTHER_PRIORITY,
  };
  // Only tokens the grammar allows are sampled; once it is complete, only the end of generation.
  if (grammarEvaluationState) options.grammarEvaluationState = grammarEvaluationState;
  if (tokenBias) options.tokenBias = tokenBias;
  if (s.temperature > 0) {
    // Off unless asked for, as documented: node-llama-cpp's own defaults are top_k 40, top_p 0.95.
    options.topK = s.topK ?? 0;
    options.topP = s.topP ?? 1;
    if (s.minP !== undefined) options.minP = s.minP;
    // Without a seed node-llama-cpp seeds with the current second, the same for every
    // generation started in it (n choices alike, every client alike): a random one instead.
    options.seed = s.seed ?? randomInt(2 ** 32);
  }
  const penalised =
    (s.repetitionPenalty !== undefined && s.repetitionPenalty !== 1) ||
    Boolean(s.presencePenalty) ||
    Boolean(s.frequencyPenalty);
  if (penalised) {
    options.repeatPenalty = {
      punishTokens: () => generated.slice(-256),
      maxPunishTokens: 256,
      penalty: s.repetitionPenalty ?? 1,
      presencePenalty: s.presencePenalty ?? 0,
      frequencyPenalty: s.frequencyPenalty ?? 0,
    };
  }
  return options;
}
