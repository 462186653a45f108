import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { issueApiKeyRoute, listApiKeysRoute, revokeApiKeyRoute } from "../contract/management/api-key-routes.js";
import { mountRoute } from "../mount-route.js";

/** The account's own API keys (services/account-keys.ts: the same rules as the account page). */
export function apiKeyRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { keys } = management;
  mountRoute(app, listApiKeysRoute, async (c, { params }) =>
    c.json({ apiKeys: await keys.listOwn(c.get("caller"), params.account_id) }, 200),
  );
  mountRoute(app, issueApiKeyRoute, async (c, { params, body }) =>
    c.json(await keys.issueOwn(c.get("caller"), params.account_id, body), 200),
  );
  mountRoute(app, revokeApiKeyRoute, async (c, { params }) =>
    c.json(await keys.revokeOwn(c.get("caller"), params.account_id, params.prefix), 200),
  );
}
