import { contractRoute, ok } from "../route.js";
import { accountParams } from "./params.js";
import { accountListSchema, accountSchema, whoAmISchema } from "./resources.js";

/** Who the key is, and the accounts it may use (its own). */

const tag = "Accounts";

export const listAccountsRoute = contractRoute({
  method: "get",
  path: "/v1/accounts",
  operationId: "listAccounts",
  scope: "any",
  summary: "List the accounts the key may use (its own)",
  tag,
  responses: ok("The key's account.", accountListSchema),
});

export const getAccountRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}",
  operationId: "getAccount",
  scope: "any",
  summary: "Get the key's account",
  tag,
  request: { params: accountParams },
  responses: ok("The account.", accountSchema),
  errors: { not_found: "account_id is not the key's own account." },
});

export const whoAmIRoute = contractRoute({
  method: "get",
  path: "/v1/whoami",
  operationId: "whoAmI",
  scope: "any",
  summary: "Who the API key is",
  tag,
  responses: ok("The key's account, ID, prefix and role.", whoAmISchema),
});
