import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  adminCreateAccountRoute,
  adminIssueKeyRoute,
  adminListAccountsRoute,
  adminListKeysRoute,
  adminRevokeKeyRoute,
  adminUpdateAccountRoute,
} from "../contract/admin/routes.js";
import { mountRoute } from "../mount-route.js";

/** /v1/admin: accounts, their limits, and API keys (each route needs the admin scope). */
export function adminRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { administration, keys } = management;
  mountRoute(app, adminListAccountsRoute, async (c) => c.json({ accounts: await administration.accounts() }, 200));
  mountRoute(app, adminCreateAccountRoute, async (c, { body }) =>
    c.json(await administration.createAccount(body), 200),
  );
  mountRoute(app, adminUpdateAccountRoute, async (c, { params, body }) =>
    c.json(await administration.updateAccount(params.account_id, body), 200),
  );
  mountRoute(app, adminIssueKeyRoute, async (c, { params, body }) =>
    c.json(await keys.issue(params.account_id, body), 200),
  );
  mountRoute(app, adminListKeysRoute, async (c, { query }) =>
    c.json({ apiKeys: await keys.list(query.account_id) }, 200),
  );
  mountRoute(app, adminRevokeKeyRoute, async (c, { params }) => c.json(await keys.revoke(params.prefix), 200));
}
