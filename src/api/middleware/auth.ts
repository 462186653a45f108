import crypto from "node:crypto";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import { CSRF_HEADER, SESSION_COOKIE, type SessionStore } from "../../auth/sessions.js";
import { AppError } from "../../errors.js";
import type { AppEnv } from "../app-env.js";

/**
 * Who calls: `Authorization: Bearer <API key>`, or a web page's session (its cookie).
 *
 * A cookie goes with every request the browser makes to this site, including one a page of
 * another site triggers: that is CSRF. So a request authenticated by the session cookie must
 * also carry the session's CSRF token in the `x-hearth-csrf` header. Only Hearth's own pages
 * know it (it is in the page, which another site cannot read), and a browser lets another
 * site's page set such a header only after a CORS preflight, which Hearth never grants. The
 * cookie is also SameSite=Lax, so it is not even sent with another site's POSTs.
 */
export function requireApiKey(apiKeys: ApiKeyAuthenticator, sessions: SessionStore) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    let key: AuthenticatedKey | null;
    if (header !== undefined || getCookie(c, SESSION_COOKIE) === undefined) {
      const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
      if (!match) {
        throw new AppError("unauthorized", "Missing API key: send it as `Authorization: Bearer <API key>`.");
      }
      key = await apiKeys.authenticate(match[1]!);
      if (!key) throw new AppError("unauthorized", "Invalid API key.");
    } else {
      const session = await sessions.get(getCookie(c, SESSION_COOKIE)!);
      if (!session) throw new AppError("unauthorized", "The session has ended: sign in again.");
      if (!sameToken(c.req.header(CSRF_HEADER), session.csrf)) {
        throw new AppError("forbidden", `A request signed in by cookie must carry the page's ${CSRF_HEADER} header.`);
      }
      key = await apiKeys.stillValid(session.keyId);
      if (!key)
        throw new AppError(
          "unauthorized",
          "The API key this session signed in with was revoked or has expired: sign in again.",
        );
    }
    c.set("caller", { accountId: key.accountId, keyId: key.keyId, keyPrefix: key.prefix, scopes: key.scopes });
    await next();
  });
}

/** Compares two secrets in constant time. */
export function sameToken(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
