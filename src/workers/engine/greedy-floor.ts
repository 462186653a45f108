import type { GenerateRequest } from "./engine.js";

/**
 * Temperatures below this are greedy, as 0 is. llama.cpp divides the logits by the temperature
 * in float32: by 1e-41 (a request may send any number in 0–2) every logit overflows, the draw is
 * from NaNs, and under a grammar it ended at once with no token, as if the value were complete.
 * Near it, the distribution is greedy's to within float32's rounding anyway.
 */
export const GREEDY_BELOW = 1e-5;

/** The request with a temperature under GREEDY_BELOW made 0, so every sampler sees it as greedy. */
export function withGreedyFloor(request: GenerateRequest): GenerateRequest {
  const { temperature } = request.sampling;
  if (temperature === 0 || temperature >= GREEDY_BELOW) return request;
  return { ...request, sampling: { ...request.sampling, temperature: 0 } };
}
