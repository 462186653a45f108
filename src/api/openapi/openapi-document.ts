import { schemaRef, type JsonSchema } from "./json-schema.js";
import { healthSchemas, managementSchemas } from "./management-schemas.js";
import { managementParameters, managementPaths } from "./management-paths.js";
import { openAiPaths } from "./openai-paths.js";
import { openAiSchemas } from "./openai-schemas.js";
import { errorSchema, jsonResponse, operation } from "./operation.js";

/**
 * The OpenAPI 3.1 description of every route of the API (createApp), served at
 * /openapi.json and /v1/openapi.json. Request bodies and query parameters come from
 * the routes' zod schemas; the error responses from errors.ts; test/api/openapi.test.ts
 * checks that the paths match the app's routes and the answers match the schemas.
 */
export function openApiDocument(): Record<string, unknown> {
  return {
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
      { name: "Accounts", description: "The key's account." },
      { name: "Service", description: "Health checks, the version and this document; no API key needed." },
    ],
    paths: { ...servicePaths(), ...openAiPaths(), ...managementPaths() },
    components: {
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "A Hearth API key (`hth_…`); it decides the account. The first admin key is in data/admin-api-key.",
        },
      },
      parameters: managementParameters(),
      schemas: { Error: errorSchema(), ...openAiSchemas(), ...managementSchemas(), ...healthSchemas() },
    },
  };
}

const TAG = "Service";

function servicePaths(): Record<string, JsonSchema> {
  const document = (operationId: string) => ({
    get: operation({
      operationId,
      summary: "This OpenAPI description",
      tag: TAG,
      public: true,
      responses: { "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }) },
    }),
  });
  return {
    "/healthz": {
      get: operation({
        operationId: "getHealth",
        summary: "Liveness: the process answers",
        tag: TAG,
        public: true,
        responses: { "200": jsonResponse("The process is up.", schemaRef("Health")) },
      }),
    },
    "/readyz": {
      get: operation({
        operationId: "getReadiness",
        summary: "Readiness: the database, Redis and at least one worker are up",
        tag: TAG,
        public: true,
        responses: {
          "200": jsonResponse("Ready.", schemaRef("Readiness")),
          "503": jsonResponse("Not ready; the fields say what is down.", schemaRef("Readiness")),
        },
      }),
    },
    "/v1/version": {
      get: operation({
        operationId: "getVersion",
        summary: "The server's version",
        tag: TAG,
        public: true,
        responses: { "200": jsonResponse("The version of Hearth this server runs.", schemaRef("Version")) },
      }),
    },
    "/openapi.json": document("getOpenApiDocument"),
    "/v1/openapi.json": document("getOpenApiDocumentV1"),
  };
}
