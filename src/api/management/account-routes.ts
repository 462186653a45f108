import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { accountResource, whoAmIResource } from "./resources.js";

/** Who the key is, and the accounts it may use (its own). */
export function accountRoutes({ management }: AppDeps) {
  const { catalog } = management;
  return new Hono<AppEnv>()
    .get("/accounts", async (c) => {
      const account = await catalog.account(c.get("caller"));
      return c.json({ accounts: [accountResource(account)], nextPageToken: "" });
    })
    .get("/accounts/:accountId", async (c) => {
      const caller = c.get("caller");
      catalog.ownAccount(caller, c.req.param("accountId"));
      return c.json(accountResource(await catalog.account(caller)));
    })
    .get("/whoami", async (c) => {
      const caller = c.get("caller");
      return c.json(whoAmIResource(caller, await catalog.account(caller)));
    });
}
