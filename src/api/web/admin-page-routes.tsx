import type { Context, Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { operationsOverview } from "../services/operations-overview.js";
import { AdminAccountPage } from "./admin-account-page.js";
import { AdminPage } from "./admin-page.js";
import { RevokeKeyPage } from "./key-views.js";
import type { PageKit } from "./page-kit.js";
import { MessagePage } from "./pages.js";
import { dailyPeriod, DEFAULT_PERIOD, periodDays } from "./usage-section.js";

/** The newest batches the console shows, of every account on /admin, of one on its page. */
const CONSOLE_BATCHES = 20;

/**
 * The operators' pages (app.ts mounts the queue board after them): an admin's session only.
 * Their requests that change something must come from Hearth's own pages (the Origin says so)
 * and carry the session's CSRF token; the session cookie, SameSite=Lax, is not sent with
 * another site's anyway.
 */
export function adminPageRoutes(app: Hono<AppEnv>, deps: AppDeps, kit: PageKit) {
  const { management, config } = deps;
  const { sessionOf, html, page } = kit;

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

  app.get(
    "/admin",
    page(async (c, session, caller) => {
      const { start, end } = dailyPeriod(DEFAULT_PERIOD, Date.now());
      const [overview, accounts, totals, batches, unrun] = await Promise.all([
        operationsOverview({
          db: deps.db,
          redis: deps.redis,
          queues: deps.queues,
          prefix: config.redisPrefix,
          stuckAfterMs: config.reconcile.afterMs,
        }),
        management.administration.accounts(),
        management.usage.byAccount(caller, { start: new Date(start), end: new Date(end) }),
        management.batches.recent(CONSOLE_BATCHES),
        management.batches.unrun(),
      ]);
      const rows = accounts.map((account) => ({ account, totals: totals.get(account.accountId) }));
      return html(
        c,
        <AdminPage
          session={session}
          overview={overview}
          accounts={rows}
          days={DEFAULT_PERIOD}
          batches={{ recent: batches, unrun, now: Date.now() }}
        />,
      );
    }),
  );

  app.get(
    "/admin/accounts/:account",
    page(async (c, session, caller) => {
      const accountId = c.req.param("account")!;
      const now = Date.now();
      const days = periodDays(c.req.query("days"));
      const [usage, keys, batches] = await Promise.all([
        management.usage.report(caller, accountId, { ...dailyPeriod(days, now), groupBy: "day_model" }),
        management.keys.list(accountId),
        management.batches.recent(CONSOLE_BATCHES, accountId),
      ]);
      return html(
        c,
        <AdminAccountPage session={session} usage={usage} keys={keys} batches={batches} days={days} now={now} />,
      );
    }),
  );

  app.get(
    "/admin/accounts/:account/keys/:prefix/revoke",
    page(async (c, session) => {
      const { account, prefix } = c.req.param() as { account: string; prefix: string };
      const apiKey = await management.keys.get(account, prefix);
      const back = `/admin/accounts/${encodeURIComponent(account)}`;
      const action = `${back}/keys/${encodeURIComponent(prefix)}/revoke`;
      return html(c, <RevokeKeyPage session={session} apiKey={apiKey} action={action} back={back} />);
    }),
  );

  app.post(
    "/admin/accounts/:account/keys/:prefix/revoke",
    ...kit.formGuard,
    page(async (c, session) => {
      if (!kit.sameForm(await c.req.parseBody(), session)) return kit.foreignForm(c, session);
      const { account, prefix } = c.req.param() as { account: string; prefix: string };
      await management.keys.revoke(prefix, account);
      return c.redirect(`/admin/accounts/${encodeURIComponent(account)}`, 303);
    }),
  );
}
