import { OpenAPIHono } from "@hono/zod-openapi";
import * as admin from "./admin/routes.js";
import * as batches from "./batch/batches-routes.js";
import * as files from "./batch/files-routes.js";
import { errorSchema } from "./errors.js";
import * as images from "./images/routes.js";
import * as accounts from "./management/account-routes.js";
import * as apiKeys from "./management/api-key-routes.js";
import * as usage from "./management/usage-routes.js";
import * as lifecycle from "./management/lifecycle-routes.js";
import * as models from "./management/model-routes.js";
import * as openai from "./openai/routes.js";
import type { ContractRoute } from "./route.js";
import * as service from "./service.js";

/** Every operation of the HTTP API; the app mounts each one (test/api/contract checks both ways). */
export const contractRoutes: ContractRoute[] = [
  service.healthRoute,
  service.readinessRoute,
  service.versionRoute,
  service.cliTarballRoute,
  ...service.documentRoutes,
  openai.completionsRoute,
  openai.chatCompletionsRoute,
  openai.embeddingsRoute,
  openai.resumeStreamRoute,
  openai.modelsRoute,
  openai.retrieveModelRoute,
  openai.retrieveModelByPathRoute,
  accounts.listAccountsRoute,
  accounts.getAccountRoute,
  accounts.whoAmIRoute,
  apiKeys.listApiKeysRoute,
  apiKeys.issueApiKeyRoute,
  apiKeys.revokeApiKeyRoute,
  usage.getUsageRoute,
  usage.exportUsageRoute,
  files.uploadFileRoute,
  files.listFilesRoute,
  files.getFileRoute,
  files.fileContentRoute,
  files.deleteFileRoute,
  batches.createBatchRoute,
  batches.getBatchRoute,
  batches.listBatchesRoute,
  batches.cancelBatchRoute,
  models.createModelRoute,
  models.listModelsRoute,
  models.getModelRoute,
  models.updateModelRoute,
  models.deleteModelRoute,
  lifecycle.uploadFileRoute,
  lifecycle.deleteFileRoute,
  lifecycle.validateModelRoute,
  lifecycle.deployModelRoute,
  lifecycle.undeployModelRoute,
  images.textToImageRoute,
  images.imageToImageRoute,
  images.controlNetRoute,
  images.openAiImagesRoute,
  admin.adminListAccountsRoute,
  admin.adminCreateAccountRoute,
  admin.adminUpdateAccountRoute,
  admin.adminIssueKeyRoute,
  admin.adminListKeysRoute,
  admin.adminRevokeKeyRoute,
];

/**
 * The OpenAPI 3.1 description of the whole HTTP API, generated from the contract's routes
 * and schemas; served at /openapi.json and /v1/openapi.json.
 */
export function openApiDocument(): Record<string, unknown> {
  const generator = new OpenAPIHono();
  const registry = generator.openAPIRegistry;
  for (const route of contractRoutes) registry.registerPath(route);
  registry.register("Error", errorSchema);
  registry.register("CompletionChunk", openai.completionChunkSchema);
  registry.register("ChatCompletionChunk", openai.chatCompletionChunkSchema);
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "A Hearth API key (`hth_…`); it decides the account. The first admin key is in data/admin-api-key.",
  });
  // The generator's config type is OpenAPI 3.0's; 3.1 adds info.summary, license.identifier, jsonSchemaDialect.
  const config = {
    openapi: "3.1.1",
    info: {
      title: "Hearth API",
      version: "v1",
      summary: "OpenAI-compatible serving of language models and LoRA adapters, and the management of adapters.",
      description:
        "Inference follows the OpenAI API (`/v1/completions`, `/v1/chat/completions`, `/v1/embeddings`, `/v1/models`); " +
        "models are named `accounts/<account_id>/models/<model_id>`. The management API creates adapter models, " +
        "uploads and validates their files, and deploys them. Every `/v1` request needs `Authorization: Bearer <API key>`; " +
        "docs/api.md walks through it with curl.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    security: [{ apiKey: [] }],
    tags: [
      { name: "OpenAI", description: "The OpenAI-compatible inference endpoints." },
      { name: "Models", description: "Adapter models: create, upload, validate, deploy, undeploy, delete." },
      {
        name: "Images",
        description: "Image generation with the image models: text-to-image, image-to-image, control-net.",
      },
      { name: "Accounts", description: "The key's account." },
      {
        name: "API keys",
        description: "The account's own API keys, for a key with the models scope (docs/security.md).",
      },
      { name: "Usage", description: "What an account's requests used: tokens, cached tokens, images (docs/usage.md)." },
      { name: "Service", description: "Health checks, the version and this document; no API key needed." },
    ],
  };
  type Config = Parameters<typeof generator.getOpenAPI31Document>[0];
  return generator.getOpenAPI31Document(config as Config) as unknown as Record<string, unknown>;
}
