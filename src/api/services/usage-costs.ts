import type { ModelPrice, Prices } from "../../config/prices.js";
import { BUILTIN_ACCOUNT_ID, modelName } from "../../domain/model-name.js";
import type { UsageTotals } from "../../db/queries/usage.js";

/** A model's price: its own, else its base model's, else the `*` entry; undefined when none applies. */
export function priceOf(prices: Prices, model: string, baseModelId: string): ModelPrice | undefined {
  return prices.models[model] ?? prices.models[modelName(BUILTIN_ACCOUNT_ID, baseModelId)] ?? prices.models["*"];
}

/** What `totals` of one model cost at `price`: cached prompt tokens at their own rate, the rest at the prompt rate. */
export function usageCost(totals: UsageTotals, price: ModelPrice | undefined): number {
  if (!price) return 0;
  const perMillion = (tokens: number, rate: number) => (tokens / 1e6) * rate;
  return (
    perMillion(totals.promptTokens - totals.cachedTokens, price.promptPerMillion) +
    perMillion(totals.cachedTokens, price.cachedPerMillion) +
    perMillion(totals.completionTokens, price.completionPerMillion) +
    totals.images * price.perImage
  );
}
