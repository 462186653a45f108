import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { getAccountRoute, listAccountsRoute, whoAmIRoute } from "../contract/management/account-routes.js";
import type { AccountList } from "../contract/management/resources.js";
import { mountRoute } from "../mount-route.js";
import { accountResource, whoAmIResource } from "../services/resources.js";

/** Who the key is, and the accounts it may use (its own). */
export function accountRoutes(app: Hono<AppEnv>, { management, config }: AppDeps) {
  const { catalog } = management;
  const defaults = config.limits;
  mountRoute(app, listAccountsRoute, async (c) => {
    const account = await catalog.account(c.get("caller"));
    return c.json({ accounts: [accountResource(account, defaults)], nextPageToken: "" } satisfies AccountList, 200);
  });
  mountRoute(app, getAccountRoute, async (c, { params }) => {
    const caller = c.get("caller");
    catalog.ownAccount(caller, params.account_id);
    return c.json(accountResource(await catalog.account(caller), defaults), 200);
  });
  mountRoute(app, whoAmIRoute, async (c) => {
    const caller = c.get("caller");
    return c.json(whoAmIResource(caller, await catalog.account(caller), defaults), 200);
  });
}
