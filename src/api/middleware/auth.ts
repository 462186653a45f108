import crypto from "node:crypto";
import { getCookie } from "hono/cookie";
import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import { CSRF_HEADER, SESSION_COOKIE, type SessionStore } from "../../auth/sessions.js";
import { AppError } from "../../errors.js";
import type { AppEnv } from "../app-env.js";
import type { Caller } from "../../domain/caller.js";
import type { TrustedProxies } from "../../proxy-trust.js";
import { clientAddress } from "../client-address.js";
import type { Admission } from "../services/admission.js";
import type { CredentialChecks } from "../services/credential-checks.js";
import { batchCallOf } from "../batch-call.js";

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
export function requireApiKey(deps: {
  apiKeys: ApiKeyAuthenticator;
  credentials: CredentialChecks;
  sessions: SessionStore;
  admission: Admission;
  proxies: TrustedProxies;
}) {
  const { apiKeys, credentials, sessions, admission, proxies } = deps;
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    let key: AuthenticatedKey | null;
    const batch = batchCallOf(c);
    if (batch) {
      key = await apiKeys.stillValid(batch.keyId);
      if (!key) {
        throw new AppError("unauthorized", "The API key that created this batch was revoked or has expired.");
      }
      c.set("batchId", batch.batchId);
    } else if (header !== undefined || getCookie(c, SESSION_COOKIE) === undefined) {
      const presented = bearerToken(header);
      if (presented === undefined) {
        throw new AppError("unauthorized", "Missing API key: send it as `Authorization: Bearer <API key>`.");
      }
      key = await credentials.apiKey(presented, clientAddress(c, proxies));
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

/** Compares two secrets in constant time. */
export function sameToken(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
