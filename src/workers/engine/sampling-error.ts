import { AppError } from "../../errors.js";
import { NO_TOKEN_MESSAGE } from "./sequence-driver.js";

/**
 * The error a request's generation ends with when its driver (sequence-driver.ts) threw `error`:
 * a failed sampling (sampling-guard.ts turns one into node-llama-cpp's "no token", and keeps
 * the native error, `nativeFailure`) is a `model_error` when a grammar was in force, where
 * llama.cpp's grammar refusing a token it had let through is the known cause, and an internal
 * error otherwise. Anything else is `error` itself.
 */
export function samplingError(error: unknown, nativeFailure: unknown, constrained: boolean): unknown {
  if (!(error instanceof Error) || error.message !== NO_TOKEN_MESSAGE) return error;
  const native = nativeFailure instanceof Error ? nativeFailure.message : String(nativeFailure ?? "no token");
  const detail = `llama.cpp's sampling failed: ${native}`;
  if (!constrained) return new AppError("internal", detail, { cause: error, detail });
  return new AppError(
    "model_error",
    "The model produced a token that its output's grammar (from response_format or tools) could not accept, " +
      "so the generation stopped. A retry, or another seed, may succeed.",
    { cause: error, detail },
  );
}
