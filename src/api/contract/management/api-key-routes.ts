import { z } from "@hono/zod-openapi";
import { JSON_BODY_LIMIT } from "../errors.js";
import { contractRoute, jsonContent, ok } from "../route.js";
import { apiKeyListSchema, apiKeySchema, issueKeyBody, issuedKeySchema } from "./api-key-resources.js";
import { accountParams } from "./params.js";

/**
 * An account's own API keys, managed with a key of it that has the models scope: the same
 * service as the account page (docs/security.md, "Keys, scopes and accounts").
 */

const tag = "API keys";

const NOT_OWN = "account_id is not the key's own account.";

export const listApiKeysRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}/api-keys",
  operationId: "listApiKeys",
  scope: "models",
  summary: "List the account's API keys (never the keys themselves)",
  tag,
  request: { params: accountParams },
  responses: ok("The account's keys, revoked and expired ones included, oldest first.", apiKeyListSchema),
  errors: { not_found: NOT_OWN },
});

export const issueApiKeyRoute = contractRoute({
  method: "post",
  path: "/v1/accounts/{account_id}/api-keys",
  operationId: "issueApiKey",
  scope: "models",
  summary: "Create an API key for the account",
  description:
    "The answer holds the whole key, the only time it is shown. The new key has only scopes the calling key " +
    "has (default: `inference` and `models`, those of them it has), and expires no later than the calling key " +
    "(default: when it does; never, for a key that never expires).",
  tag,
  request: {
    params: accountParams,
    body: { required: true, content: jsonContent(issueKeyBody) },
  },
  responses: ok("The key, and what listings show of it.", issuedKeySchema),
  errors: {
    ...JSON_BODY_LIMIT,
    invalid_request: "A field is invalid (`param` names it).",
    forbidden:
      "A scope the calling key lacks (`param` scopes), or an expiry after the calling key's (`param` expireTime).",
    not_found: NOT_OWN,
  },
});

export const revokeApiKeyRoute = contractRoute({
  method: "delete",
  path: "/v1/accounts/{account_id}/api-keys/{prefix}",
  operationId: "revokeApiKey",
  scope: "models",
  summary: "Revoke one of the account's API keys by its prefix",
  description:
    "Any key of the account, the calling one included (its web sessions end with it). Every API process " +
    "refuses it within `HEARTH_AUTH_CACHE_TTL_MS`; this one at once.",
  tag,
  request: {
    params: accountParams.extend({
      prefix: z.string().openapi({
        param: { name: "prefix", in: "path", description: "The key's first 12 characters, e.g. hth_AbCdEfGh." },
      }),
    }),
  },
  responses: ok("The key, revoked (revoking it again changes nothing).", apiKeySchema),
  errors: { not_found: `${NOT_OWN} Or no key of the account has that prefix (another account's reads the same).` },
});
