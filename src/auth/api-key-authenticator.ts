import type { Db } from "../db/client.js";
import { findActiveApiKey } from "../db/queries/api-keys.js";
import { TtlCache, type CacheTiming } from "../ttl-cache.js";
import { authenticateApiKey, hashApiKey, isPresentableApiKey, type AuthenticatedKey } from "./api-keys.js";

const MAX_CACHED_KEYS = 10_000;

/**
 * API-key authentication for the API process: the database check of `authenticateApiKey`
 * (constant-time hash comparison, last-used bookkeeping), with its successes reused for
 * a short while. Entries are found by the key's SHA-256 (what the database stores), never
 * by the key itself. Unknown, wrong, revoked and expired keys are not cached, so they are
 * checked every time. A key revoked through another process keeps working here for at most
 * the TTL, as does a key past its expiry; code in this process that revokes a key calls `forget`.
 */
export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<string, AuthenticatedKey>;
  /** Keys still valid, by ID: a web session names its key by ID (it never holds the key). */
  private readonly byId: TtlCache<string, AuthenticatedKey>;

  constructor(
    private readonly db: Db,
    /** ttlMs: how long a successful check is reused (HEARTH_AUTH_CACHE_TTL_MS); 0: every call asks the database. */
    timing: CacheTiming,
  ) {
    this.cache = new TtlCache({ ...timing, maxEntries: MAX_CACHED_KEYS });
    this.byId = new TtlCache({ ...timing, maxEntries: MAX_CACHED_KEYS });
  }

  /** The key of a web session, if it is still valid (neither revoked nor expired), with its scopes. */
  async stillValid(keyId: string): Promise<AuthenticatedKey | null> {
    return this.byId.getOrLoad(keyId, async () => {
      const key = await findActiveApiKey(this.db, keyId);
      return key && { accountId: key.accountId, keyId: key.id, scopes: key.scopes, prefix: key.prefix };
    });
  }

  /** The key's account and scopes, or null for an unknown, wrong, revoked, expired or malformed key. */
  async authenticate(presentedKey: string): Promise<AuthenticatedKey | null> {
    if (!isPresentableApiKey(presentedKey)) return null;
    return this.cache.getOrLoad(hashApiKey(presentedKey), () => authenticateApiKey(this.db, presentedKey));
  }

  /** The key's account and scopes if a successful check of it is still reused: no database query needed. */
  known(presentedKey: string): AuthenticatedKey | undefined {
    return isPresentableApiKey(presentedKey) ? this.cache.cached(hashApiKey(presentedKey)) : undefined;
  }

  /** Stops reusing the checks of one key (by its ID): the next request asks the database. */
  forget(keyId: string): void {
    this.cache.deleteWhere((key) => key.keyId === keyId);
    this.byId.deleteWhere((key) => key.keyId === keyId);
  }
}
