import fs from "node:fs";
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import type { AuthenticatedKey } from "../../auth/api-keys.js";
import { SESSION_COOKIE, sessionId, type Session } from "../../auth/sessions.js";
import { BUILTIN_ACCOUNT_ID } from "../../domain/model-name.js";
import { AppError } from "../../errors.js";
import { quarantineMessage } from "../../templates/template-quarantine.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import type { Caller } from "../../domain/caller.js";
import { clientAddress, overTls } from "../client-address.js";
import { sameToken } from "../middleware/auth.js";
import { setAssetHeaders, setPageHeaders } from "../middleware/security-headers.js";
import { operationsOverview } from "../services/operations-overview.js";
import { AdminPage } from "./admin-page.js";
import { MessagePage, ModelPage, ModelsPage, SignInPage } from "./pages.js";

const STATIC_FILES: Record<string, string> = {
  "style.css": "text/css; charset=utf-8",
  "playground.js": "text/javascript; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};
const staticDir = new URL("./static/", import.meta.url);
const statics = new Map(
  Object.entries(STATIC_FILES).map(([name, type]) => [name, { type, body: fs.readFileSync(new URL(name, staticDir)) }]),
);

/** The pages (the static files aside) and the operators' ones, each under the page limit. */
const PAGE_PATHS = ["/", "/signin", "/signout", "/models", "/accounts/*", "/admin", "/admin/*"];

/**
 * The web pages (server-rendered with hono/jsx): sign in with an API key, the account's
 * models, and a page per model with a playground that streams from Hearth's own endpoints.
 * docs/web.md says how sessions and CSRF work.
 */
export function webRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  const { sessions, apiKeys, credentials, management, config } = deps;
  // Forms post only from Hearth's own pages (Origin checked), and are small.
  const formGuard = [csrf(), bodyLimit({ maxSize: 16 * 1024 })] as const;

  const serveStatic = (c: Context<AppEnv>, name: string) => {
    const file = statics.get(name);
    if (!file) return c.text("Not found", 404);
    setAssetHeaders(c);
    return c.body(file.body, 200, { "content-type": file.type, "cache-control": "no-cache" });
  };
  app.get("/static/:file", (c) => serveStatic(c, c.req.param("file")));
  // What browsers ask for unprompted (the pages link the same icon): SVG, as browsers read it.
  app.get("/favicon.ico", (c) => serveStatic(c, "favicon.svg"));

  /** The signed-in session of the request, if any (its key still valid); looked up once per request. */
  const sessionOf = async (c: Context<AppEnv>): Promise<Session | null> => {
    const known = c.get("session");
    if (known !== undefined) return known;
    const token = getCookie(c, SESSION_COOKIE);
    let session = token ? await sessions.get(token) : null;
    if (session && !(await apiKeys.stillValid(session.keyId))) session = null;
    c.set("session", session);
    return session;
  };

  const html = (c: Context<AppEnv>, page: unknown, status: 200 | 401 | 403 | 404 | 429 | 503 = 200) => {
    setPageHeaders(c);
    return c.html(page as string, status);
  };

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

  /** A page that needs a session: signed-out visitors go to sign in, and come back after. */
  const page =
    (render: (c: Context<AppEnv>, session: Session, caller: Caller) => Promise<Response>) =>
    async (c: Context<AppEnv>) => {
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
        if (!(error instanceof AppError) || error.code !== "not_found") throw error;
        return html(c, <MessagePage session={session} title="Not found" message={error.message} />, 404);
      }
    };

  // The operators' pages (app.ts mounts them after this): an admin's session only. Their
  // requests that change something must come from Hearth's own pages (the Origin says so);
  // the session cookie, SameSite=Lax, is not sent with another site's anyway.
  app.use("/admin", adminGuard);
  app.use("/admin/*", adminGuard);
  async function adminGuard(c: Context<AppEnv>, next: () => Promise<void>) {
    const session = await sessionOf(c);
    if (!session) return c.redirect(`/?next=${encodeURIComponent(c.req.path)}`, 303);
    if (!session.scopes.includes("admin")) {
      const message = "These pages are for operators: sign in with a key that has the admin scope.";
      return html(c, <MessagePage session={session} title="Admins only" message={message} />, 403);
    }
    const unsafe = !["GET", "HEAD", "OPTIONS"].includes(c.req.method);
    if (unsafe && c.req.header("origin") !== new URL(c.req.url).origin) {
      return html(
        c,
        <MessagePage session={session} title="Refused" message="That request did not come from Hearth's own pages." />,
        403,
      );
    }
    await next();
  }

  app.get("/admin", async (c) => {
    const session = (await sessionOf(c))!; // the /admin/* guard let it through
    const overview = await operationsOverview({
      db: deps.db,
      redis: deps.redis,
      queues: deps.queues,
      prefix: config.redisPrefix,
      stuckAfterMs: config.reconcile.afterMs,
    });
    return html(c, <AdminPage session={session} overview={overview} />);
  });

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
      const form = await c.req.parseBody();
      if (!sameToken(typeof form.csrf === "string" ? form.csrf : undefined, session.csrf)) {
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
