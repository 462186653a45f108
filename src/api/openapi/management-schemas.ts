import { DEPLOYMENT_STATES } from "../../db/schema/deployments.js";
import { ADAPTER_FORMATS, MODEL_KINDS, MODEL_STATES } from "../../db/schema/models.js";
import { createModelBody, updateModelBody } from "../management/protocol.js";
import { fromZod, nullable, schemaRef, type JsonSchema } from "./json-schema.js";

/**
 * Schemas of the management API: request bodies from management/protocol.ts; the
 * resources as management/resources.ts shapes them (written out here, closed with
 * additionalProperties: false so the tests notice a field added there and not here).
 */

const time = { type: "string", format: "date-time" };
const nullableTime = { type: ["string", "null"], format: "date-time" };

const MODEL_ID = "1–63 lowercase letters, digits and hyphens, starting with a letter or digit.";
const TEMPLATE = "A Jinja chat template, as in a GGUF's tokenizer.chat_template.";

export function managementSchemas(): Record<string, JsonSchema> {
  return {
    CreateModelRequest: fromZod(createModelBody, {
      modelId: `The new model's ID: ${MODEL_ID} Taken IDs are a 409.`,
      "model.displayName": "Default: the modelId.",
      "model.baseModel":
        "accounts/<account_id>/models/<model_id> of a READY base model you may use; " +
        "may instead come from base_model in the upload's hearth.json.",
      "model.conversationConfig": "The adapter's own chat template; default: from hearth.json, else the base model's.",
      "model.conversationConfig.template": TEMPLATE,
    }),
    UpdateModelRequest: fromZod(updateModelBody, {
      conversationConfig: "The adapter's own chat template; null removes it.",
    }),
    Model: {
      type: "object",
      additionalProperties: false,
      required: [
        "name",
        "accountId",
        "modelId",
        "kind",
        "displayName",
        "description",
        "baseModel",
        "state",
        "stateReason",
        "format",
        "rank",
        "contextLength",
        "conversationConfig",
        "public",
        "createTime",
        "updateTime",
        "deployment",
      ],
      properties: {
        name: { type: "string", description: "accounts/<account_id>/models/<model_id>: what inference requests name." },
        accountId: { type: "string" },
        modelId: { type: "string" },
        kind: {
          type: "string",
          enum: [...MODEL_KINDS],
          description: "`base`: a GGUF the operator serves; `lora`: an uploaded adapter.",
        },
        displayName: { type: "string" },
        description: { type: "string" },
        baseModel: {
          type: ["string", "null"],
          description: "An adapter's base model (known once validated at the latest).",
        },
        state: {
          type: "string",
          enum: [...MODEL_STATES],
          description: "UPLOADING (files may be PUT) → VALIDATING → READY (deployable), or FAILED with stateReason.",
        },
        stateReason: { type: ["string", "null"], description: "Why validation FAILED." },
        format: nullable({ type: "string", enum: [...ADAPTER_FORMATS] }),
        rank: { type: ["integer", "null"], description: "The adapter's LoRA rank, once validated." },
        contextLength: { type: ["integer", "null"] },
        conversationConfig: nullable({
          type: "object",
          required: ["template"],
          properties: { template: { type: "string", description: TEMPLATE } },
        }),
        public: { type: "boolean", description: "Visible to every account (the built-in base models)." },
        createTime: time,
        updateTime: time,
        deployment: nullable(schemaRef("Deployment")),
        files: {
          type: "array",
          items: schemaRef("ModelFile"),
          description: "The uploaded files; only in the answers to create, validate and get (of an adapter).",
        },
      },
    },
    Deployment: {
      type: "object",
      additionalProperties: false,
      required: ["state", "reason", "createTime", "updateTime", "deployTime"],
      properties: {
        state: {
          type: "string",
          enum: [...DEPLOYMENT_STATES],
          description:
            "DEPLOYING → DEPLOYED (queries are served), or FAILED with reason; undeploy: UNDEPLOYING, then the deployment is null.",
        },
        reason: { type: ["string", "null"], description: "Why the deployment FAILED." },
        createTime: time,
        updateTime: time,
        deployTime: { ...nullableTime, description: "When the model last became DEPLOYED." },
      },
    },
    ModelFile: {
      type: "object",
      additionalProperties: false,
      required: ["name", "size"],
      properties: { name: { type: "string" }, size: { type: "integer", description: "Bytes." } },
    },
    UploadedFile: {
      type: "object",
      additionalProperties: false,
      required: ["name", "size", "sha256"],
      properties: {
        name: { type: "string" },
        size: { type: "integer", description: "Bytes stored." },
        sha256: { type: ["string", "null"], description: "The stored content's SHA-256, hex." },
      },
    },
    ModelPage: {
      type: "object",
      additionalProperties: false,
      required: ["models", "nextPageToken"],
      properties: {
        models: { type: "array", items: schemaRef("Model") },
        nextPageToken: { type: "string", description: "Pass as pageToken for the next page; empty on the last page." },
      },
    },
    Account: {
      type: "object",
      additionalProperties: false,
      required: ["name", "accountId", "displayName", "enterprise", "maxDeployedModels", "createTime"],
      properties: {
        name: { type: "string", description: "accounts/<account_id>" },
        accountId: { type: "string" },
        displayName: { type: "string" },
        enterprise: { type: "boolean", description: "Enterprise accounts have no limit on deployed models." },
        maxDeployedModels: {
          type: ["integer", "null"],
          description: "How many models may be deployed (or deploying, or undeploying) at once; null: no limit.",
        },
        createTime: time,
      },
    },
    AccountList: {
      type: "object",
      additionalProperties: false,
      required: ["accounts", "nextPageToken"],
      properties: {
        accounts: { type: "array", items: schemaRef("Account"), description: "The key's own account." },
        nextPageToken: { type: "string", description: "Always empty." },
      },
    },
    WhoAmI: {
      type: "object",
      additionalProperties: false,
      required: ["accountId", "keyId", "keyPrefix", "role", "account"],
      properties: {
        accountId: { type: "string" },
        keyId: { type: "string", description: "The API key's ID." },
        keyPrefix: {
          type: "string",
          description:
            "The key's first 12 characters, as `npm run admin -- list-keys` shows them (the rest is never shown).",
        },
        role: { type: "string", enum: ["admin", "user"] },
        account: schemaRef("Account"),
      },
    },
    Deleted: { type: "object", additionalProperties: false, description: "An empty object." },
  };
}

/** /healthz, /readyz and /v1/version (no key). */
export function healthSchemas(): Record<string, JsonSchema> {
  return {
    Version: {
      type: "object",
      additionalProperties: false,
      required: ["version"],
      properties: {
        version: { type: "string", description: "The server's version (its package.json), e.g. `0.1.0`." },
      },
    },
    Health: { type: "object", required: ["status"], properties: { status: { const: "ok" } } },
    Readiness: {
      type: "object",
      required: ["status", "database", "redis", "workers"],
      properties: {
        status: { type: "string", enum: ["ready", "not ready"] },
        database: { type: "string", description: "`ok`, or `down: <why>`." },
        redis: { type: "string", description: "`ok`, or `down: <why>`." },
        workers: { type: "integer", description: "Workers alive (reporting their heartbeat)." },
      },
    },
  };
}
