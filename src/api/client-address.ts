import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import type { TrustedProxies } from "../proxy-trust.js";
import type { AppEnv } from "./app-env.js";

/**
 * The client's address, for everything that counts by address (failed authentications, signed-
 * out visitors' pages): the connection's, or behind trusted proxies (HEARTH_TRUST_PROXY) the
 * rightmost X-Forwarded-For entry that is not one of them (proxy-trust.ts).
 */
export function clientAddress(c: Context<AppEnv>, proxies: TrustedProxies): string {
  return proxies.clientAddress(peerAddress(c), c.req.header("x-forwarded-for"));
}

/** Whether the request came over TLS: to this server, or to a trusted proxy that says so in X-Forwarded-Proto. */
export function overTls(c: Context<AppEnv>, proxies: TrustedProxies): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  if (!proxies.trusts(peerAddress(c), 0)) return false;
  return c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";
}

/** The connection's peer. */
function peerAddress(c: Context<AppEnv>): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown"; // not served by node-server (app.request in tests)
  }
}
