/**
 * Model names: `accounts/<account_id>/models/<model_id>`, both IDs lowercase letters,
 * digits and hyphens, 1–63 characters, starting with a letter or digit.
 */
const NAME = /^accounts\/([a-z0-9][a-z0-9-]{0,62})\/models\/([a-z0-9][a-z0-9-]{0,62})$/;

/** The built-in account that owns the operator's base models. It has no API keys. */
export const BUILTIN_ACCOUNT_ID = "hearth";

export const modelName = (accountId: string, modelId: string) => `accounts/${accountId}/models/${modelId}`;

/** A name split into its IDs; undefined when it is not a model name. */
export function parseModelName(name: string): { accountId: string; modelId: string } | undefined {
  const match = NAME.exec(name);
  return match ? { accountId: match[1]!, modelId: match[2]! } : undefined;
}
