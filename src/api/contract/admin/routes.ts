import { z } from "@hono/zod-openapi";
import { ACCOUNT_ID_PATTERN } from "../../../domain/vocabulary.js";
import { JSON_BODY_LIMIT } from "../errors.js";
import { contractRoute, jsonContent, ok } from "../route.js";
import { accountSchema } from "../management/resources.js";
import { apiKeyListSchema, apiKeySchema, issueKeyBody, issuedKeySchema } from "../management/api-key-resources.js";
import { allAccountsSchema, createAccountBody, updateAccountBody } from "./resources.js";

/** The operators' endpoints: accounts, their limits, and API keys. Keys with the admin scope only. */

const tag = "Administration";
const ADMIN_ONLY = {};

const accountId = z
  .string()
  .regex(ACCOUNT_ID_PATTERN)
  .openapi({ param: { name: "account_id", in: "path", description: "The account's ID." } });

export const adminListAccountsRoute = contractRoute({
  method: "get",
  path: "/v1/admin/accounts",
  operationId: "adminListAccounts",
  scope: "admin",
  summary: "List every account",
  tag,
  responses: ok("Every account, oldest first.", allAccountsSchema),
  errors: ADMIN_ONLY,
});

export const adminCreateAccountRoute = contractRoute({
  method: "post",
  path: "/v1/admin/accounts",
  operationId: "adminCreateAccount",
  scope: "admin",
  summary: "Create an account",
  tag,
  request: { body: { required: true, content: jsonContent(createAccountBody) } },
  responses: ok("The new account.", accountSchema),
  errors: {
    ...ADMIN_ONLY,
    ...JSON_BODY_LIMIT,
    invalid_request: "A field is missing or invalid (`param` names it).",
    conflict: "An account with that ID exists.",
  },
});

export const adminUpdateAccountRoute = contractRoute({
  method: "patch",
  path: "/v1/admin/accounts/{account_id}",
  operationId: "adminUpdateAccount",
  scope: "admin",
  summary: "Change an account: its name, deployment limit, rate limits and quotas",
  description:
    "Each limit given is set; `null` puts it back to the server's default. It applies at once on this API process and within `HEARTH_AUTH_CACHE_TTL_MS` on the others.",
  tag,
  request: {
    params: z.object({ account_id: accountId }),
    body: { required: true, content: jsonContent(updateAccountBody) },
  },
  responses: ok("The account, with its limits as they now apply.", accountSchema),
  errors: {
    ...ADMIN_ONLY,
    ...JSON_BODY_LIMIT,
    invalid_request: "A field is invalid (`param` names it).",
    not_found: "No such account.",
  },
});

export const adminIssueKeyRoute = contractRoute({
  method: "post",
  path: "/v1/admin/accounts/{account_id}/api-keys",
  operationId: "adminIssueApiKey",
  scope: "admin",
  summary: "Create an API key for an account",
  description: "The answer holds the whole key, the only time it is shown.",
  tag,
  request: {
    params: z.object({ account_id: accountId }),
    body: { required: true, content: jsonContent(issueKeyBody) },
  },
  responses: ok("The key, and what listings show of it.", issuedKeySchema),
  errors: {
    ...ADMIN_ONLY,
    ...JSON_BODY_LIMIT,
    invalid_request: "A field is invalid (`param` names it).",
    not_found: "No such account.",
  },
});

export const adminListKeysRoute = contractRoute({
  method: "get",
  path: "/v1/admin/api-keys",
  operationId: "adminListApiKeys",
  scope: "admin",
  summary: "List API keys (never the keys themselves)",
  tag,
  request: {
    query: z.object({
      account_id: z.string().optional().openapi({ description: "Only this account's keys." }),
    }),
  },
  responses: ok("The keys, oldest first.", apiKeyListSchema),
  errors: { ...ADMIN_ONLY, not_found: "account_id names no account." },
});

export const adminRevokeKeyRoute = contractRoute({
  method: "delete",
  path: "/v1/admin/api-keys/{prefix}",
  operationId: "adminRevokeApiKey",
  scope: "admin",
  summary: "Revoke an API key by its prefix",
  tag,
  request: {
    params: z.object({
      prefix: z.string().openapi({
        param: { name: "prefix", in: "path", description: "The key's first 12 characters, e.g. hth_AbCdEfGh." },
      }),
    }),
  },
  responses: ok("The key, revoked (revoking it again changes nothing).", apiKeySchema),
  errors: { ...ADMIN_ONLY, not_found: "No key has that prefix." },
});
