import { z } from "@hono/zod-openapi";
import { ACCOUNT_ID_PATTERN, API_KEY_SCOPES, DEFAULT_KEY_SCOPES } from "../../../domain/vocabulary.js";
import { accountSchema } from "../management/resources.js";

/** What the admin endpoints take and answer: accounts and their API keys. */

const time = z.string().openapi({ format: "date-time" });

export const createAccountBody = z
  .strictObject({
    accountId: z
      .string()
      .regex(ACCOUNT_ID_PATTERN, "must be 1–63 lowercase letters, digits and hyphens, starting with a letter or digit")
      .openapi({ description: "The new account's ID. A taken ID is a 409." }),
    displayName: z.string().min(1).max(256).optional().openapi({ description: "Default: the accountId." }),
    enterprise: z.boolean().optional().openapi({ description: "No limit on deployed models. Default: false." }),
    maxDeployedModels: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .optional()
      .openapi({ description: "How many models it may deploy at once. Default: 100." }),
  })
  .openapi("CreateAccountRequest");
export type CreateAccountRequest = z.infer<typeof createAccountBody>;

const limit = (max: number) =>
  z
    .number()
    .int()
    .min(1, { message: "a limit is at least 1 (null puts back the default)" })
    .max(max)
    .nullable()
    .optional();

export const updateAccountBody = z
  .strictObject({
    displayName: z.string().min(1).max(256).optional(),
    enterprise: z.boolean().optional().openapi({ description: "No limit on deployed models." }),
    maxDeployedModels: z.number().int().min(0).max(1_000_000_000).optional(),
    limits: z
      .strictObject({
        requestsPerMinute: limit(100_000_000),
        tokensPerMinute: limit(2_000_000_000),
        maxInFlightRequests: limit(1_000_000),
        maxModels: limit(1_000_000_000),
        maxStoredBytes: limit(Number.MAX_SAFE_INTEGER),
      })
      .optional()
      .openapi({ description: "Each one given: a number, or null for the server's default (docs/security.md)." }),
  })
  .openapi("UpdateAccountRequest");
export type UpdateAccountRequest = z.infer<typeof updateAccountBody>;

export const issueKeyBody = z
  .strictObject({
    name: z.string().min(1).max(256).optional().openapi({ description: "What the key is for. Default: default." }),
    scopes: z
      .array(z.enum(API_KEY_SCOPES, { message: `a scope is one of ${API_KEY_SCOPES.join(", ")}` }))
      .min(1, { message: "a key needs at least one scope" })
      .optional()
      .openapi({
        description:
          "`inference`: generate; `models`: create, upload, deploy and delete the account's models; `admin`: " +
          `the operators' endpoints, pages and metrics. Default: ${DEFAULT_KEY_SCOPES.join(", ")}.`,
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

export const allAccountsSchema = z.strictObject({ accounts: z.array(accountSchema) }).openapi("AllAccounts");
export type AllAccounts = z.infer<typeof allAccountsSchema>;
