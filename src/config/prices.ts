import { z } from "zod";

/**
 * What an operator charges, when it says (HEARTH_PRICES, docs/usage.md): per model, per million
 * prompt tokens (cached ones apart), per image and per deployed hour, in one currency. A model's
 * price is its own entry, else its base model's (an adapter costs what its base does unless
 * priced apart), else the `*` entry, else nothing.
 */
const amount = z.number().min(0).max(1e9);

export const modelPriceSchema = z.strictObject({
  /** Per million prompt tokens that were evaluated (not cached). */
  promptPerMillion: amount.default(0),
  /** Per million prompt tokens whose cells an earlier request left (prompt caching). */
  cachedPerMillion: amount.default(0),
  completionPerMillion: amount.default(0),
  perImage: amount.default(0),
  perDeployedHour: amount.default(0),
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;

const pricesSchema = z.strictObject({
  currency: z.string().regex(/^[A-Z]{3}$/, "currency must be an ISO 4217 code such as USD"),
  models: z.record(z.string().min(1), modelPriceSchema),
});
export type Prices = z.infer<typeof pricesSchema>;

/** HEARTH_PRICES's JSON, or the problem with it in one line. */
export function parsePrices(text: string): Prices | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `not JSON (${(error as Error).message})` };
  }
  const parsed = pricesSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  return { problem: `${issue.path.join(".") || "the value"}: ${issue.message}` };
}
