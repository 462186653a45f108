import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import type { VerifiedKeys } from "../../auth/verified-keys.js";
import { AppError } from "../../errors.js";
import type { RateWindows } from "../../limits/rate-windows.js";
import { limited } from "./admission.js";

/**
 * Every check of a presented API key (the /v1 bearer, the sign-in form, /metrics), behind the
 * failed-authentication limit (docs/security.md): an address that failed too often this minute
 * is refused before the database is asked, since each unknown key costs a query. A key known
 * to be good never is: one this process checked lately (its cache) goes on without Redis, and
 * one any process checked within the day (VerifiedKeys) still gets its database check, so an
 * attacker sharing or naming an address cannot lock a legitimate key out.
 */
export class CredentialChecks {
  constructor(
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly windows: RateWindows,
    private readonly verified: VerifiedKeys,
    private readonly failuresPerMinute: number,
  ) {}

  /** The key `presented` from `address`: a 429 for an address refused, a 401 for a wrong key (counted). */
  async apiKey(presented: string, address: string): Promise<AuthenticatedKey> {
    const known = this.apiKeys.known(presented);
    if (known) return known;
    // The address's failures and whether the key is known to be good, read together.
    const [window, verified] = await Promise.all([
      this.windows.peek("auth-failures", address, this.failuresPerMinute),
      this.verified.touch(presented),
    ]);
    if (window.remaining <= 0 && !verified) {
      throw limited(`Too many failed authentications from ${address} this minute.`, window, "requests");
    }
    const key = await this.apiKeys.authenticate(presented);
    if (!key) {
      await Promise.all([this.failed(address), verified ? this.verified.remove(presented) : undefined]);
      throw new AppError("unauthorized", "Invalid API key.");
    }
    if (!verified) await this.verified.add(presented);
    return key;
  }

  /** A failed authentication from `address`, counted. */
  private async failed(address: string): Promise<void> {
    await this.windows.consume("auth-failures", address, 1, this.failuresPerMinute);
  }
}
