import type { Db } from "../../db/client.js";
import { getAccount } from "../../db/queries/accounts.js";
import { effectiveLimits, type AccountLimits, type LimitDefaults } from "../../limits/effective-limits.js";
import { TtlCache, type CacheTiming } from "../../ttl-cache.js";

/**
 * Each account's limits as they apply (what an admin set, else the configured defaults),
 * reused for a short while like API-key checks: an admin's change applies at once in the
 * process that made it (`forget`) and within the TTL in the others.
 */
export class AccountLimitsCache {
  private readonly cache: TtlCache<string, AccountLimits>;

  constructor(
    private readonly db: Db,
    readonly defaults: LimitDefaults,
    timing: CacheTiming,
  ) {
    this.cache = new TtlCache({ ...timing, maxEntries: 10_000 });
  }

  async of(accountId: string): Promise<AccountLimits> {
    const limits = await this.cache.getOrLoad(accountId, async () => {
      const account = await getAccount(this.db, accountId);
      return account && effectiveLimits(account, this.defaults);
    });
    // A key's account exists (keys are deleted with it); the defaults serve a race with its deletion.
    return limits ?? effectiveLimits(NO_OVERRIDES, this.defaults);
  }

  forget(accountId: string): void {
    this.cache.deleteWhere((_, key) => key === accountId);
  }
}

const NO_OVERRIDES = {
  requestsPerMinute: null,
  tokensPerMinute: null,
  maxInFlightRequests: null,
  maxModels: null,
  maxStoredBytes: null,
};
