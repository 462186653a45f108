import crypto from "node:crypto";
import type { RedisClient } from "../redis/connection.js";
import { callRedis } from "../redis/redis-call.js";

/** How long a key stays known to be good after its last successful check. */
const VERIFIED_TTL_SECONDS = 24 * 3600;

/**
 * The API keys that some API process checked against the database within the last day, in
 * Redis, so that every process knows them: an address locked out for failed authentications
 * (shared with an attacker behind one NAT, or named by a forged header) still gets a database
 * check for such a key, while a guess, not among them, is refused before any query. Each key
 * is stored under a hash of a fixed label and the key, not the hash the database stores, so
 * neither store's copy finds a row of the other; a copy of Redis holds no key.
 */
export class VerifiedKeys {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** Redis down or slow past this: a 503 (redis-call.ts). */
    private readonly timeoutMs: number,
  ) {}

  /** Whether `presented` was verified within the day; if so, the day starts again. */
  async touch(presented: string): Promise<boolean> {
    return (await this.call(() => this.redis.expire(this.key(presented), VERIFIED_TTL_SECONDS))) === 1;
  }

  /** `presented` was just checked against the database and is good. */
  async add(presented: string): Promise<void> {
    await this.call(() => this.redis.set(this.key(presented), "1", "EX", VERIFIED_TTL_SECONDS));
  }

  /** `presented` was just refused by the database (revoked or expired since). */
  async remove(presented: string): Promise<void> {
    await this.call(() => this.redis.del(this.key(presented)));
  }

  private call<T>(fn: () => Promise<T>): Promise<T> {
    return callRedis(this.redis, this.timeoutMs, fn);
  }

  private key(presented: string): string {
    const hash = crypto.createHash("sha256").update("hearth verified api key\0").update(presented).digest("hex");
    return `${this.prefix}:verified-key:${hash}`;
  }
}
