import type { Usage } from "../requests/stream.js";
import type { GenerateCounts } from "./engine/engine.js";

/**
 * A request's usage from its choices' counts, as OpenAI counts it: each prompt once (the first
 * of its `n` choices), the completion tokens of every choice. A choice with no counts yet adds
 * nothing.
 */
export function usageOf(choices: readonly (GenerateCounts | undefined)[], n: number): Usage {
  const usage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  choices.forEach((counts, index) => {
    if (!counts) return;
    if (index % n === 0) {
      usage.promptTokens += counts.promptTokens;
      usage.cachedTokens += counts.cachedTokens;
    }
    usage.completionTokens += counts.completionTokens;
  });
  return usage;
}

/**
 * A request's usage so far, kept from its choices' engine progress (GenerateRequest.progress).
 * Each event of generated text carries it (requests/stream.ts), so that a request cut short is
 * metered by what it had generated when its last event left, whoever meters it.
 */
export class UsageTally {
  private readonly choices: GenerateCounts[] = [];

  constructor(private readonly n: number) {}

  /** Choice `index`'s progress callback. */
  of(index: number): (counts: GenerateCounts) => void {
    return (counts) => {
      this.choices[index] = counts;
    };
  }

  now(): Usage {
    return usageOf(this.choices, this.n);
  }
}
