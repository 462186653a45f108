import { z } from "@hono/zod-openapi";
import { ACCOUNT_ID_PATTERN } from "../../../domain/vocabulary.js";
import { accountSchema } from "../management/resources.js";

/** What the admin endpoints take and answer about accounts (API keys: management/api-key-resources.ts). */

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

export const allAccountsSchema = z.strictObject({ accounts: z.array(accountSchema) }).openapi("AllAccounts");
export type AllAccounts = z.infer<typeof allAccountsSchema>;
