import { z } from "@hono/zod-openapi";
import {
  ADAPTER_FORMATS,
  API_KEY_SCOPES,
  DEPLOYMENT_STATES,
  MODEL_KINDS,
  MODEL_STATES,
} from "../../../domain/vocabulary.js";

/**
 * The management API's objects as every route that returns them shows them. Closed
 * (additionalProperties: false), so that a field the routes add and this does not fails
 * the tests that check real answers against the document.
 */

const time = z.iso.datetime();
const TEMPLATE = "A Jinja chat template, as in a GGUF's tokenizer.chat_template.";

export const conversationConfigSchema = z
  .strictObject({ template: z.string().min(1).max(65_536).openapi({ description: TEMPLATE }) })
  .openapi({ description: "An adapter's own chat template." });
export type ConversationConfig = z.infer<typeof conversationConfigSchema>;

export const deploymentSchema = z
  .strictObject({
    state: z.enum(DEPLOYMENT_STATES).openapi({
      description:
        "DEPLOYING → DEPLOYED (queries are served), or FAILED with reason; undeploy: UNDEPLOYING, then the deployment is null.",
    }),
    reason: z.string().nullable().openapi({ description: "Why the deployment FAILED." }),
    createTime: time,
    updateTime: time,
    deployTime: time.nullable().openapi({ description: "When the model last became DEPLOYED." }),
  })
  .openapi("Deployment");
export type DeploymentResource = z.infer<typeof deploymentSchema>;

export const modelFileSchema = z
  .strictObject({ name: z.string(), size: z.number().int().openapi({ description: "Bytes." }) })
  .openapi("ModelFile");
export type ModelFile = z.infer<typeof modelFileSchema>;

export const modelSchema = z
  .strictObject({
    name: z.string().openapi({ description: "accounts/<account_id>/models/<model_id>: what inference requests name." }),
    accountId: z.string(),
    modelId: z.string(),
    kind: z
      .enum(MODEL_KINDS)
      .openapi({ description: "`base`: a GGUF the operator serves; `lora`: an uploaded adapter." }),
    displayName: z.string(),
    description: z.string(),
    baseModel: z
      .string()
      .nullable()
      .openapi({ description: "An adapter's base model (known once validated at the latest)." }),
    state: z.enum(MODEL_STATES).openapi({
      description: "UPLOADING (files may be PUT) → VALIDATING → READY (deployable), or FAILED with stateReason.",
    }),
    stateReason: z.string().nullable().openapi({ description: "Why validation FAILED." }),
    format: z.enum(ADAPTER_FORMATS).nullable(),
    rank: z.number().int().nullable().openapi({ description: "The adapter's LoRA rank, once validated." }),
    contextLength: z.number().int().nullable(),
    conversationConfig: z.looseObject({ template: z.string().openapi({ description: TEMPLATE }) }).nullable(),
    public: z.boolean().openapi({ description: "Visible to every account (the built-in base models)." }),
    createTime: time,
    updateTime: time,
    // Not deploymentSchema.nullable(): the generator would then make the Deployment component
    // itself accept null; a union keeps it an object and writes anyOf [$ref, null] here.
    deployment: z.union([deploymentSchema, z.null()]),
    files: z.array(modelFileSchema).optional().openapi({
      description: "The uploaded files; only in the answers to create, validate and get (of an adapter).",
    }),
  })
  .openapi("Model");
export type ModelResource = z.infer<typeof modelSchema>;

export const uploadedFileSchema = z
  .strictObject({
    name: z.string(),
    size: z.number().int().openapi({ description: "Bytes stored." }),
    sha256: z.string().nullable().openapi({ description: "The stored content's SHA-256, hex." }),
  })
  .openapi("UploadedFile");
export type UploadedFile = z.infer<typeof uploadedFileSchema>;

export const modelPageSchema = z
  .strictObject({
    models: z.array(modelSchema),
    nextPageToken: z.string().openapi({ description: "Pass as pageToken for the next page; empty on the last page." }),
  })
  .openapi("ModelPage");
export type ModelPage = z.infer<typeof modelPageSchema>;

export const accountLimitsSchema = z
  .strictObject({
    requestsPerMinute: z.number().int().nullable().openapi({ description: "Over every /v1 request; null: no limit." }),
    tokensPerMinute: z.number().int().nullable().openapi({
      description: "Prompt and completion tokens of generations; null: no limit.",
    }),
    maxInFlightRequests: z.number().int().openapi({ description: "Generation requests queued or running at once." }),
    maxModels: z.number().int().openapi({ description: "Models the account may have." }),
    maxStoredBytes: z.number().int().openapi({ description: "Bytes of uploaded files the account may store." }),
  })
  .openapi("AccountLimits", {
    description: "The account's limits as they apply: set by an admin, else the server's defaults (docs/security.md).",
  });

export const accountSchema = z
  .strictObject({
    name: z.string().openapi({ description: "accounts/<account_id>" }),
    accountId: z.string(),
    displayName: z.string(),
    enterprise: z.boolean().openapi({ description: "Enterprise accounts have no limit on deployed models." }),
    maxDeployedModels: z.number().int().nullable().openapi({
      description: "How many models may be deployed (or deploying, or undeploying) at once; null: no limit.",
    }),
    limits: accountLimitsSchema,
    createTime: time,
  })
  .openapi("Account");
export type AccountResource = z.infer<typeof accountSchema>;

export const accountListSchema = z
  .strictObject({
    accounts: z.array(accountSchema).openapi({ description: "The key's own account." }),
    nextPageToken: z.string().openapi({ description: "Always empty." }),
  })
  .openapi("AccountList");
export type AccountList = z.infer<typeof accountListSchema>;

export const whoAmISchema = z
  .strictObject({
    accountId: z.string(),
    keyId: z.string().openapi({ description: "The API key's ID." }),
    keyPrefix: z.string().openapi({
      description:
        "The key's first 12 characters, as `npm run admin -- list-keys` shows them (the rest is never shown).",
    }),
    scopes: z.array(z.enum(API_KEY_SCOPES)).openapi({ description: "What the key may do (docs/security.md)." }),
    account: accountSchema,
  })
  .openapi("WhoAmI");
export type WhoAmI = z.infer<typeof whoAmISchema>;

export const deletedSchema = z.strictObject({}).openapi("Deleted", { description: "An empty object." });
