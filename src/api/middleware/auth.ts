import crypto from "node:crypto";
import { getCookie } from "hono/cookie";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import { CSRF_HEADER, SESSION_COOKIE, type SessionStore } from "../../auth/sessions.js";
import { AppError } from "../../errors.js";
import type { AppEnv, Caller } from "../app-env.js";
import type { Admission } from "../services/admission.js";

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
export function requireApiKey(
  apiKeys: ApiKeyAuthenticator,
  sessions: SessionStore,
  admission: Admission,
  trustProxy: boolean,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    let key: AuthenticatedKey | null;
    if (header !== undefined || getCookie(c, SESSION_COOKIE) === undefined) {
      const presented = bearerToken(header);
      if (presented === undefined) {
        throw new AppError("unauthorized", "Missing API key: send it as `Authorization: Bearer <API key>`.");
      }
      const address = clientAddress(c, trustProxy);
      const known = apiKeys.known(presented);
      if (known) {
        // No database query to spare: the address's failures and the key's and account's
        // windows are read together, in one round trip to Redis instead of two.
        const [, headers] = await Promise.all([admission.checkAddress(address), admission.request(callerOf(known))]);
        return authenticated(c, next, known, headers);
      }
      // Guessing keys costs a database query each: an address that keeps failing is cut off first.
      await admission.checkAddress(address);
      key = await apiKeys.authenticate(presented);
      if (!key) {
        await admission.authFailed(address);
        throw new AppError("unauthorized", "Invalid API key.");
      }
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
    // Every authenticated request counts against its key's and its account's requests per minute.
    return authenticated(c, next, key, await admission.request(callerOf(key)));
  });
}

/** The key an `Authorization: Bearer <key>` header presents. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

const callerOf = (key: AuthenticatedKey): Caller => ({
  accountId: key.accountId,
  keyId: key.keyId,
  keyPrefix: key.prefix,
  scopes: key.scopes,
});

/** Goes on as the key's caller, answering with `headers` (its rate windows). */
async function authenticated(c: Context<AppEnv>, next: Next, key: AuthenticatedKey, headers: Record<string, string>) {
  c.set("caller", callerOf(key));
  c.set("answerHeaders", headers);
  await next();
  // On every answer, streams and error bodies included (a handler's own Response does not
  // carry what c.header set, so they are added here, to whatever answer was made).
  setHeaders(c, c.get("answerHeaders"));
}

function setHeaders(c: Context<AppEnv>, headers: Record<string, string>): void {
  const entries = Object.entries(headers).filter(([name]) => !c.res.headers.has(name));
  if (entries.length === 0) return;
  try {
    for (const [name, value] of entries) c.res.headers.set(name, value);
  } catch {
    // Immutable headers (a Response from fetch): the same answer, with headers of its own.
    const copy = new Response(c.res.body, c.res);
    for (const [name, value] of entries) copy.headers.set(name, value);
    c.res = copy;
  }
}

/** The client's address: the connection's, or behind a trusted proxy the first X-Forwarded-For entry. */
export function clientAddress(c: Context<AppEnv>, trustProxy: boolean): string {
  const forwarded = trustProxy ? c.req.header("x-forwarded-for")?.split(",")[0]?.trim() : undefined;
  if (forwarded) return forwarded;
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown"; // not served by node-server (app.request in tests)
  }
}

/** Compares two secrets in constant time. */
export function sameToken(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
