/**
 * An account's limits as they apply: what an admin set for it, else the configured default
 * (docs/security.md). Rates of 0 in the configuration mean no limit (null here).
 */

export interface LimitDefaults {
  requestsPerMinute: number;
  tokensPerMinute: number;
  maxInFlightRequests: number;
  maxModels: number;
  maxStoredBytes: number;
}

/** What an admin may set on an account; null: the default. */
export type LimitOverrides = { [K in keyof LimitDefaults]: number | null };

export interface AccountLimits {
  /** Requests per minute over every /v1 route; null: no limit. */
  requestsPerMinute: number | null;
  /** Prompt plus completion tokens per minute; null: no limit. */
  tokensPerMinute: number | null;
  /** Generation requests queued or running at once. */
  maxInFlightRequests: number;
  maxModels: number;
  maxStoredBytes: number;
}

export const LIMIT_FIELDS = [
  "requestsPerMinute",
  "tokensPerMinute",
  "maxInFlightRequests",
  "maxModels",
  "maxStoredBytes",
] as const satisfies readonly (keyof LimitDefaults)[];

export function effectiveLimits(account: LimitOverrides, defaults: LimitDefaults): AccountLimits {
  const rate = (value: number | null, fallback: number) => value ?? (fallback === 0 ? null : fallback);
  return {
    requestsPerMinute: rate(account.requestsPerMinute, defaults.requestsPerMinute),
    tokensPerMinute: rate(account.tokensPerMinute, defaults.tokensPerMinute),
    maxInFlightRequests: account.maxInFlightRequests ?? defaults.maxInFlightRequests,
    maxModels: account.maxModels ?? defaults.maxModels,
    maxStoredBytes: account.maxStoredBytes ?? defaults.maxStoredBytes,
  };
}
