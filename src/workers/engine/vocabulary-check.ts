import { AppError } from "../../errors.js";

/**
 * Token IDs a request gives (a prompt or input as token IDs, logit_bias's keys) against the
 * model's vocabulary, before any reaches llama.cpp, which reads past its arrays (or aborts the
 * process) on an ID it does not have. Out of range is a 400 naming `param` and the ID.
 */
export function checkTokenIds(tokens: Iterable<number>, vocabularySize: number, param: string): void {
  for (const token of tokens) {
    if (Number.isInteger(token) && token >= 0 && token < vocabularySize) continue;
    throw new AppError(
      "invalid_request",
      `${param} names token ${token}, but this model's vocabulary has tokens 0 to ${vocabularySize - 1}.`,
      { param },
    );
  }
}
