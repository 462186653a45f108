import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  adminCreateAccountRoute,
  adminIssueKeyRoute,
  adminListAccountsRoute,
  adminListKeysRoute,
  adminRevokeKeyRoute,
} from "../contract/admin/routes.js";
import { accountResource } from "../management/resources.js";
import { mountRoute } from "../mount-route.js";

/** /v1/admin: accounts and API keys. app.ts lets only admin keys reach them. */
export function adminRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { administration } = management;
  mountRoute(app, adminListAccountsRoute, async (c) =>
    c.json({ accounts: (await administration.accounts()).map(accountResource) }, 200),
  );
  mountRoute(app, adminCreateAccountRoute, async (c, { body }) =>
    c.json(accountResource(await administration.createAccount(body)), 200),
  );
  mountRoute(app, adminIssueKeyRoute, async (c, { params, body }) =>
    c.json(await administration.issueKey(params.account_id, body), 200),
  );
  mountRoute(app, adminListKeysRoute, async (c, { query }) =>
    c.json({ apiKeys: await administration.keys(query.account_id) }, 200),
  );
  mountRoute(app, adminRevokeKeyRoute, async (c, { params }) =>
    c.json(await administration.revokeKey(params.prefix), 200),
  );
}
