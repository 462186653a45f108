import { z } from "@hono/zod-openapi";
import { API_KEY_SCOPES, DEFAULT_KEY_SCOPES } from "../../../domain/vocabulary.js";

/**
 * API keys as the endpoints take and answer them: an account's own (`/v1/accounts/…/api-keys`)
 * and the operators' (`/v1/admin/…`).
 */

const time = z.string().openapi({ format: "date-time" });

export const issueKeyBody = z
  .strictObject({
    name: z.string().min(1).max(256).optional().openapi({ description: "What the key is for. Default: default." }),
    scopes: z
      .array(z.enum(API_KEY_SCOPES, { message: `a scope is one of ${API_KEY_SCOPES.join(", ")}` }))
      .min(1, { message: "a key needs at least one scope" })
      .optional()
      .openapi({
        description:
          "`inference`: generate; `models`: create, upload, deploy and delete the account's models, read its " +
          "usage, manage its keys; `admin`: the operators' endpoints, pages and metrics. " +
          `Default: ${DEFAULT_KEY_SCOPES.join(", ")}.`,
      }),
    expireTime: z.iso
      .datetime({ offset: true, message: "expireTime must be an RFC 3339 date-time, e.g. 2027-01-31T00:00:00Z" })
      .optional()
      .openapi({ description: "When the key stops working (RFC 3339). Default: never." }),
  })
  .openapi("IssueApiKeyRequest");
export type IssueApiKeyRequest = z.infer<typeof issueKeyBody>;

export const apiKeySchema = z
  .strictObject({
    prefix: z.string().openapi({ description: "The key's first 12 characters: how listings name it." }),
    accountId: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    createTime: time,
    lastUseTime: time.nullable(),
    expireTime: time.nullable(),
    revokeTime: time.nullable(),
  })
  .openapi("ApiKey", { description: "An API key, never the key itself (only its SHA-256 is stored)." });
export type ApiKeyResource = z.infer<typeof apiKeySchema>;

export const issuedKeySchema = z
  .strictObject({
    key: z.string().openapi({ description: "The whole key: shown this once, stored nowhere." }),
    apiKey: apiKeySchema,
  })
  .openapi("IssuedApiKey");
export type IssuedApiKey = z.infer<typeof issuedKeySchema>;

export const apiKeyListSchema = z.strictObject({ apiKeys: z.array(apiKeySchema) }).openapi("ApiKeyList");
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;
