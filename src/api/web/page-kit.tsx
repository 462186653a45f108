import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { SESSION_COOKIE, type Session } from "../../auth/sessions.js";
import type { Caller } from "../../domain/caller.js";
import { AppError } from "../../errors.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import { sameToken } from "../middleware/auth.js";
import { setPageHeaders } from "../middleware/security-headers.js";
import { MessagePage } from "./pages.js";

/** The statuses a page answers with. */
export type PageStatus = 200 | 400 | 401 | 403 | 404 | 429 | 503;

/** What every group of pages is built with (web-routes.tsx makes one and hands it round). */
export interface PageKit {
  /** The signed-in session of the request, if any (its key still valid); looked up once per request. */
  sessionOf(c: Context<AppEnv>): Promise<Session | null>;
  /** Answers a page, with the pages' headers. */
  html(c: Context<AppEnv>, page: unknown, status?: PageStatus): Response;
  /**
   * A page that needs a session: signed-out visitors go to sign in, and come back after. A
   * service's not_found is a 404 page, its forbidden a 403 page, each with the service's words.
   */
  page(
    render: (c: Context<AppEnv>, session: Session, caller: Caller) => Promise<Response>,
  ): (c: Context<AppEnv>) => Promise<Response>;
  /** Forms post only from Hearth's own pages (Origin checked), and are small. */
  formGuard: readonly [MiddlewareHandler, MiddlewareHandler];
  /** Whether a posted form carries the session's CSRF token (docs/web.md). */
  sameForm(form: Record<string, unknown>, session: Session): boolean;
  /** The 403 page of a form without it. */
  foreignForm(c: Context<AppEnv>, session: Session): Response;
}

export function pageKit(deps: AppDeps): PageKit {
  const { sessions, apiKeys } = deps;

  const sessionOf = async (c: Context<AppEnv>): Promise<Session | null> => {
    const known = c.get("session");
    if (known !== undefined) return known;
    const token = getCookie(c, SESSION_COOKIE);
    let session = token ? await sessions.get(token) : null;
    if (session && !(await apiKeys.stillValid(session.keyId))) session = null;
    c.set("session", session);
    return session;
  };

  const html = (c: Context<AppEnv>, page: unknown, status: PageStatus = 200) => {
    setPageHeaders(c);
    return c.html(page as string, status);
  };

  const page: PageKit["page"] = (render) => async (c) => {
    const session = await sessionOf(c);
    if (!session) return c.redirect(`/?next=${encodeURIComponent(c.req.path)}`, 303);
    const caller: Caller = {
      accountId: session.accountId,
      keyId: session.keyId,
      keyPrefix: session.prefix,
      scopes: session.scopes,
    };
    try {
      return await render(c, session, caller);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== "not_found" && error.code !== "forbidden")) throw error;
      const [title, status] = error.code === "not_found" ? ["Not found", 404 as const] : ["Not allowed", 403 as const];
      return html(c, <MessagePage session={session} title={title} message={error.message} />, status);
    }
  };

  return {
    sessionOf,
    html,
    page,
    formGuard: [csrf(), bodyLimit({ maxSize: 16 * 1024 })],
    sameForm: (form, session) => sameToken(typeof form.csrf === "string" ? form.csrf : undefined, session.csrf),
    foreignForm: (c, session) =>
      html(c, <MessagePage session={session} title="Refused" message="The form was not Hearth's own." />, 403),
  };
}
