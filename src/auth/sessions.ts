import crypto from "node:crypto";
import type { RedisClient } from "../redis/connection.js";
import type { AuthenticatedKey } from "./api-keys.js";

/**
 * The web pages' sessions, in Redis, so any API process serves them. A session is made by
 * signing in with an API key and holds who signed in (the key's ID, account and scopes, never
 * the key) and the token its pages send back with every JSON request (CSRF). The cookie holds
 * a random token; Redis holds its SHA-256 only, so a copy of Redis signs nobody in. A session
 * lasts `ttlMs` from its last use; signing out deletes it.
 */
export interface Session extends AuthenticatedKey {
  /** Sent by the pages' scripts in the `x-hearth-csrf` header with each API call. */
  csrf: string;
  createdAt: string;
}

export class SessionStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  /** A new session for a key that was just checked; its token goes in the cookie. */
  async create(key: AuthenticatedKey): Promise<{ token: string; session: Session }> {
    const token = crypto.randomBytes(32).toString("base64url");
    const session: Session = {
      accountId: key.accountId,
      keyId: key.keyId,
      scopes: key.scopes,
      prefix: key.prefix,
      csrf: crypto.randomBytes(24).toString("base64url"),
      createdAt: new Date().toISOString(),
    };
    await this.redis.set(this.key(token), JSON.stringify(session), "PX", this.ttlMs);
    return { token, session };
  }

  /** The session of a cookie's token (its lifetime starts again), or null. */
  async get(token: string): Promise<Session | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const key = this.key(token);
    const [[, value]] = (await this.redis.multi().get(key).pexpire(key, this.ttlMs).exec()) as [
      [unknown, string | null],
    ];
    return value ? (JSON.parse(value) as Session) : null;
  }

  async delete(token: string): Promise<void> {
    await this.redis.del(this.key(token));
  }

  private key(token: string): string {
    return `${this.prefix}:session:${sessionId(token)}`;
  }
}

/** What names a session in Redis (its key, its page window): its token's SHA-256, never the token. */
export function sessionId(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

/** The cookie that carries a session's token. */
export const SESSION_COOKIE = "hearth_session";
/** The header the pages' scripts send a session's CSRF token in. */
export const CSRF_HEADER = "x-hearth-csrf";
