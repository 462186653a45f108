import type { Context } from "hono";

/**
 * The security headers of what Hearth serves to browsers: its own pages (web/) and the queue
 * board (admin/admin-pages.ts). One Content-Security-Policy, from one set of directives; a page
 * that needs more adds sources to a directive, saying why where it does.
 */

/** A policy as directives, each a list of sources. */
export type CspDirectives = Readonly<Record<string, readonly string[]>>;

/** Only what Hearth serves loads (no plugin, no other base URL), and nothing may frame a page. */
const PAGE_POLICY: CspDirectives = {
  "default-src": ["'self'"],
  "img-src": ["'self'", "data:", "blob:"],
  "script-src": ["'self'"],
  "style-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'self'"],
  "frame-ancestors": ["'none'"],
  "form-action": ["'self'"],
};

/** Hearth's policy, with `extra` sources added to some of its directives. */
export function contentSecurityPolicy(extra: CspDirectives = {}): string {
  const directives = { ...PAGE_POLICY };
  for (const [name, sources] of Object.entries(extra)) directives[name] = [...(directives[name] ?? []), ...sources];
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources.join(" ")}`)
    .join("; ");
}

/** Hearth's own pages' policy. */
export const PAGE_CSP = contentSecurityPolicy();

/**
 * A page, or the JSON a page reads: its policy, never stored by a browser or a proxy (it shows
 * an account's data, or a queue's jobs), never read as another type than it says.
 */
export function setPageHeaders(c: Context, csp = PAGE_CSP): void {
  c.header("content-security-policy", csp);
  c.header("cache-control", "no-store");
  c.header("x-content-type-options", "nosniff");
}

/**
 * A static asset (a script, a style sheet, an image): cacheable, but never read as another type
 * than it says, and under the same policy should a browser open it as a document (an SVG).
 */
export function setAssetHeaders(c: Context, csp = PAGE_CSP): void {
  c.header("content-security-policy", csp);
  c.header("x-content-type-options", "nosniff");
}
