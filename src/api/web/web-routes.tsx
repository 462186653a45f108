import fs from "node:fs";
import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import { SESSION_COOKIE, sessionId } from "../../auth/sessions.js";
import { BUILTIN_ACCOUNT_ID } from "../../domain/model-name.js";
import { AppError } from "../../errors.js";
import { quarantineMessage } from "../../templates/template-quarantine.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import { clientAddress, overTls } from "../client-address.js";
import { setAssetHeaders } from "../middleware/security-headers.js";
import { accountPageRoutes } from "./account-routes.js";
import { adminPageRoutes } from "./admin-page-routes.js";
import { batchPageRoutes } from "./batch-routes.js";
import { pageKit } from "./page-kit.js";
import { MessagePage, ModelPage, ModelsPage, SignInPage } from "./pages.js";

const STATIC_FILES: Record<string, string> = {
  "style.css": "text/css; charset=utf-8",
  "playground.js": "text/javascript; charset=utf-8",
  "batches.js": "text/javascript; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};
const staticDir = new URL("./static/", import.meta.url);
const statics = new Map(
  Object.entries(STATIC_FILES).map(([name, type]) => [name, { type, body: fs.readFileSync(new URL(name, staticDir)) }]),
);

/** The pages (the static files aside) and the operators' ones, each under the page limit. */
const PAGE_PATHS = [
  "/",
  "/signin",
  "/signout",
  "/models",
  "/accounts/*",
  "/account",
  "/account/*",
  "/batches",
  "/batches/*",
  "/files/*",
  "/admin",
  "/admin/*",
];

/**
 * The web pages (server-rendered with hono/jsx): sign in with an API key, the account's
 * models, a page per model with a playground that streams from Hearth's own endpoints, the
 * account's usage and keys, its batches, and the operators' pages. docs/web.md says how sessions and CSRF work.
 */
export function webRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  const { sessions, credentials, management, config } = deps;
  const kit = pageKit(deps);
  const { sessionOf, html, page, formGuard } = kit;

  const serveStatic = (c: Context<AppEnv>, name: string) => {
    const file = statics.get(name);
    if (!file) return c.text("Not found", 404);
    setAssetHeaders(c);
    return c.body(file.body, 200, { "content-type": file.type, "cache-control": "no-cache" });
  };
  app.get("/static/:file", (c) => serveStatic(c, c.req.param("file")));
  // What browsers ask for unprompted (the pages link the same icon): SVG, as browsers read it.
  app.get("/favicon.ico", (c) => serveStatic(c, "favicon.svg"));

  /** A 429 page for a refusal of the limits (its Retry-After with it). */
  const tooMany = (c: Context<AppEnv>, refusal: AppError, page: unknown) => {
    for (const [name, value] of Object.entries(refusal.headers)) c.header(name, value);
    return html(c, page, 429);
  };

  // Every page request counts against its session's window, or its address's when signed out
  // (a cookie that names no session counts as signed out, so made-up cookies gain nothing).
  for (const path of PAGE_PATHS) {
    app.use(path, async (c, next) => {
      const session = await sessionOf(c);
      const subject = session
        ? `session:${sessionId(getCookie(c, SESSION_COOKIE)!)}`
        : `address:${clientAddress(c, deps.proxies)}`;
      try {
        await deps.admission.page(subject);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== "rate_limited") throw error;
        const page = <MessagePage session={session ?? undefined} title="Too many requests" message={error.message} />;
        return tooMany(c, error, page);
      }
      await next();
    });
  }

  // The operators' pages (app.ts mounts the queue board after them), and the account's own.
  adminPageRoutes(app, deps, kit);
  accountPageRoutes(app, deps, kit);
  batchPageRoutes(app, deps, kit);

  app.get("/", async (c) => {
    if (await sessionOf(c)) return c.redirect("/models", 303);
    return html(c, <SignInPage next={safeNext(c.req.query("next"))} />);
  });

  app.post("/signin", ...formGuard, async (c) => {
    const form = await c.req.parseBody();
    const presented = typeof form.api_key === "string" ? form.api_key.trim() : "";
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    if (!presented) return html(c, <SignInPage error="Enter an API key." next={next} />, 401);
    let key: AuthenticatedKey;
    try {
      key = await credentials.apiKey(presented, clientAddress(c, deps.proxies));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === "rate_limited") return tooMany(c, error, <SignInPage error={error.message} next={next} />);
      if (error.code !== "unauthorized") throw error;
      const message = "That API key is not valid: it is mistyped, revoked, or from another Hearth.";
      return html(c, <SignInPage error={message} next={next} />, 401);
    }
    const { token } = await sessions.create(key);
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "Lax",
      secure: overTls(c, deps.proxies),
      path: "/",
      maxAge: Math.floor(config.web.sessionTtlMs / 1000),
    });
    return c.redirect(next ?? "/models", 303);
  });

  app.post("/signout", ...formGuard, async (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    const session = token ? await sessions.get(token) : null;
    if (session) {
      if (!kit.sameForm(await c.req.parseBody(), session)) {
        return html(
          c,
          <MessagePage session={session} title="Not signed out" message="The form was not Hearth's own." />,
          403,
        );
      }
      await sessions.delete(token!);
    }
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect("/", 303);
  });

  app.get(
    "/models",
    page(async (c, session, caller) => {
      const all = { limit: 200 };
      const own = await management.catalog.list(caller, caller.accountId, all);
      const base =
        caller.accountId === BUILTIN_ACCOUNT_ID
          ? { models: [] }
          : await management.catalog.list(caller, BUILTIN_ACCOUNT_ID, all);
      return html(c, <ModelsPage session={session} own={own.models} base={base.models} />);
    }),
  );

  app.get(
    "/accounts/:account/models/:model",
    page(async (c, session, caller) => {
      const view = await management.catalog.get(caller, c.req.param("account")!, c.req.param("model")!);
      const files = view.model.kind === "lora" ? await management.catalog.files(view.model) : [];
      const servable =
        view.model.kind === "lora" ? view.deployment?.state === "DEPLOYED" : view.model.state === "READY";
      const template = view.model.conversationConfig?.template;
      const quarantined =
        typeof template === "string" ? await management.catalog.templates.quarantine(template) : undefined;
      return html(
        c,
        <ModelPage
          session={session}
          view={view}
          files={files}
          servable={servable}
          templateQuarantine={quarantined && quarantineMessage(quarantined)}
        />,
      );
    }),
  );
}

/** A path on this site to go to after signing in; anything else (another site) is dropped. */
function safeNext(next: string | undefined): string | undefined {
  return next && /^\/(?!\/)[\w\-./%]*$/.test(next) ? next : undefined;
}
