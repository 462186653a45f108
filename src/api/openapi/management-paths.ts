import { ADDON_FILE_NAMES } from "../../models/adapters/addon-file-names.js";
import { ACCOUNT_ID_PATTERN } from "../../db/schema/accounts.js";
import { MODEL_ID_PATTERN, deleteModelQuery, listModelsQuery } from "../management/protocol.js";
import { parameterRef, queryParameters, schemaRef, type JsonSchema } from "./json-schema.js";
import { JSON_BODY_LIMIT, jsonBody, jsonResponse, operation, type Reasons } from "./operation.js";

/** The management API: accounts, models, their files and deployments. */

const MODELS = "Models";
const ACCOUNTS = "Accounts";

const MODEL_PATH = "/v1/accounts/{account_id}/models/{model_id}";

export function managementParameters(): Record<string, JsonSchema> {
  return {
    AccountId: {
      name: "account_id",
      in: "path",
      required: true,
      description:
        "The account's ID; only the key's own account (and, for reads, `hearth`'s public models) is visible.",
      schema: { type: "string", pattern: ACCOUNT_ID_PATTERN.source },
    },
    ModelId: {
      name: "model_id",
      in: "path",
      required: true,
      description: "The model's ID, the last part of its name accounts/<account_id>/models/<model_id>.",
      schema: { type: "string", pattern: MODEL_ID_PATTERN.source },
    },
    FileName: {
      name: "file_name",
      in: "path",
      required: true,
      description:
        "One of the files an adapter consists of (docs/addons.md); anything else is a 400 with param file_name.",
      schema: { type: "string", enum: [...ADDON_FILE_NAMES] },
    },
  };
}

const modelNotFound = (what = "yours"): Reasons => ({
  not_found: `The model does not exist or is not ${what}: another account's model answers exactly like a missing one.`,
});
const notAnAdapter = (action: string): Reasons => ({
  invalid_request: `The model is a base model; only uploaded adapters can be ${action}.`,
});
const QUEUE_DOWN: Reasons = {
  unavailable: "The database or the job queue (Redis) is unavailable; retry shortly.",
};

const modelAnswer = (description: string) => ({ "200": jsonResponse(description, schemaRef("Model")) });
const modelParameters = [parameterRef("AccountId"), parameterRef("ModelId")];

function accountPaths(): Record<string, JsonSchema> {
  return {
    "/v1/accounts": {
      get: operation({
        operationId: "listAccounts",
        summary: "List the accounts the key may use (its own)",
        tag: ACCOUNTS,
        responses: { "200": jsonResponse("The key's account.", schemaRef("AccountList")) },
      }),
    },
    "/v1/accounts/{account_id}": {
      parameters: [parameterRef("AccountId")],
      get: operation({
        operationId: "getAccount",
        summary: "Get the key's account",
        tag: ACCOUNTS,
        responses: { "200": jsonResponse("The account.", schemaRef("Account")) },
        errors: { not_found: "account_id is not the key's own account." },
      }),
    },
    "/v1/whoami": {
      get: operation({
        operationId: "whoAmI",
        summary: "Who the API key is",
        tag: ACCOUNTS,
        responses: { "200": jsonResponse("The key's account, ID, prefix and role.", schemaRef("WhoAmI")) },
      }),
    },
  };
}

function modelPaths(): Record<string, JsonSchema> {
  return {
    "/v1/accounts/{account_id}/models": {
      parameters: [parameterRef("AccountId")],
      post: operation({
        operationId: "createModel",
        summary: "Create an adapter model",
        description: "Creates a LoRA adapter model in state UPLOADING; then PUT its files and validate it.",
        tag: MODELS,
        requestBody: jsonBody(schemaRef("CreateModelRequest")),
        responses: { "201": jsonResponse("The new model (state UPLOADING, files: []).", schemaRef("Model")) },
        errors: {
          invalid_request:
            "The body is invalid (`param` names the field, e.g. `modelId`); model.baseModel is not a READY base model the key may use.",
          not_found: "account_id is not the key's own account.",
          conflict: 'The modelId is taken in this account (`param: "modelId"`).',
          ...JSON_BODY_LIMIT,
        },
      }),
      get: operation({
        operationId: "listAccountModels",
        summary: "List an account's models",
        description:
          "The key's own account lists all its models; `hearth` lists its public base models. Ordered by model ID.",
        tag: MODELS,
        parameters: queryParameters(listModelsQuery, {
          pageSize: "Models per page, 1–200 (default 50).",
          pageToken: "The nextPageToken of the previous page.",
          filter:
            "`field=value` terms joined by AND over state (UPLOADING, VALIDATING, READY, FAILED), kind (base, lora) " +
            "and baseModel, e.g. `state=READY AND kind=lora`.",
        }),
        responses: { "200": jsonResponse("One page of models.", schemaRef("ModelPage")) },
        errors: {
          invalid_request: "pageSize, pageToken or filter is invalid (`param` names it).",
          not_found: "account_id is neither the key's own account nor `hearth`.",
        },
      }),
    },
    [MODEL_PATH]: {
      parameters: modelParameters,
      get: operation({
        operationId: "getModel",
        summary: "Get a model",
        description: "An adapter's answer lists its uploaded files.",
        tag: MODELS,
        responses: modelAnswer("The model."),
        errors: modelNotFound("yours or public"),
      }),
      patch: operation({
        operationId: "updateModel",
        summary: "Update a model's display name, description or chat template",
        tag: MODELS,
        requestBody: jsonBody(schemaRef("UpdateModelRequest"), "Only the fields given change."),
        responses: modelAnswer("The updated model."),
        errors: {
          invalid_request: "The body is invalid (`param` names the field).",
          ...modelNotFound(),
          ...JSON_BODY_LIMIT,
        },
      }),
      delete: operation({
        operationId: "deleteModel",
        summary: "Delete an adapter model and its files",
        tag: MODELS,
        parameters: queryParameters(deleteModelQuery, {
          force: "`true` undeploys a deployed model first; without it deleting a deployed model is a 409.",
        }),
        responses: { "200": jsonResponse("Deleted.", schemaRef("Deleted")) },
        errors: {
          invalid_request:
            "force is not `true` or `false`; the model is a base model (only uploaded adapters can be deleted).",
          ...modelNotFound(),
          conflict: "The model is deployed (or deploying, or undeploying) and force is not `true`.",
        },
      }),
    },
  };
}

function lifecyclePaths(): Record<string, JsonSchema> {
  return {
    [`${MODEL_PATH}/files/{file_name}`]: {
      parameters: [...modelParameters, parameterRef("FileName")],
      put: operation({
        operationId: "uploadModelFile",
        summary: "Upload one of an adapter's files",
        description:
          "The raw file content as the body (`curl --data-binary @file`), streamed to storage. A file is stored whole or not " +
          "at all and replaces an earlier one of the same name. Allowed while the model is UPLOADING or FAILED (a FAILED " +
          "model goes back to UPLOADING). The body limit is `HEARTH_MAX_UPLOAD_BYTES`, not `HEARTH_MAX_BODY_BYTES`.",
        tag: MODELS,
        parameters: [
          {
            name: "x-content-sha256",
            in: "header",
            required: false,
            description: "The SHA-256 (hex) the content must have; a mismatch is a 400 and stores nothing.",
            schema: { type: "string", pattern: "^[0-9a-fA-F]{64}$" },
          },
        ],
        requestBody: {
          required: true,
          description: "The file's bytes (any Content-Type; application/octet-stream is best).",
          content: {
            "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
          },
        },
        responses: { "200": jsonResponse("The stored file.", schemaRef("UploadedFile")) },
        errors: {
          invalid_request:
            'file_name is not an addon file (`param: "file_name"`); x-content-sha256 is malformed or does not match; ' +
            "there is no body; the model is a base model.",
          ...modelNotFound(),
          conflict: "The model is VALIDATING or READY: its files can no longer change.",
          payload_too_large:
            "The file is larger than `HEARTH_MAX_UPLOAD_BYTES` (checked against Content-Length first).",
        },
      }),
      delete: operation({
        operationId: "deleteModelFile",
        summary: "Remove one of an adapter's uploaded files",
        description:
          "For a model that is UPLOADING or FAILED, e.g. after uploading a file of the wrong form (a FAILED model goes " +
          "back to UPLOADING). Removing a file that is not there is fine.",
        tag: MODELS,
        responses: { "200": jsonResponse("Removed.", schemaRef("Deleted")) },
        errors: {
          invalid_request: 'file_name is not an addon file (`param: "file_name"`); the model is a base model.',
          ...modelNotFound(),
          conflict: "The model is VALIDATING or READY: its files can no longer change.",
        },
      }),
    },
    [`${MODEL_PATH}/validate`]: {
      parameters: modelParameters,
      post: operation({
        operationId: "validateModel",
        summary: "Validate an adapter's files against its base model",
        description:
          "UPLOADING or FAILED → VALIDATING → READY, answered when done. On a problem the model becomes FAILED with the " +
          "reason as stateReason, and the answer is a 400 with the same message. A READY model answers as it is.",
        tag: MODELS,
        responses: modelAnswer("The READY model, with its files."),
        errors: {
          invalid_request:
            "No files were uploaded; hearth.json or the adapter files are invalid or do not fit the base model; no base model " +
            "is known; the model is a base model. The model is now FAILED.",
          ...modelNotFound(),
          conflict: "The model is already being validated.",
        },
      }),
    },
    [`${MODEL_PATH}/deploy`]: {
      parameters: modelParameters,
      post: operation({
        operationId: "deployModel",
        summary: "Deploy a READY adapter",
        description:
          "Answers at once: deployment.state is DEPLOYING, then DEPLOYED once converted (poll getModel), or FAILED with a " +
          "reason. Deploying a DEPLOYING or DEPLOYED model changes nothing.",
        tag: MODELS,
        responses: modelAnswer("The model; its deployment shows the progress."),
        errors: {
          invalid_request: "The model is a base model, or not READY (uploaded and validated).",
          ...modelNotFound(),
          conflict: "The model is being undeployed; deploy it again once that has finished.",
          quota_exceeded:
            "The account already has maxDeployedModels (default 100) models deployed, deploying or undeploying; " +
            "enterprise accounts have no limit.",
          ...QUEUE_DOWN,
        },
      }),
    },
    [`${MODEL_PATH}/undeploy`]: {
      parameters: modelParameters,
      post: operation({
        operationId: "undeployModel",
        summary: "Undeploy an adapter",
        description:
          "Answers at once: deployment.state is UNDEPLOYING, then the deployment is null. New queries get 404 (not deployed) " +
          "at once; running ones finish. A FAILED deployment is simply removed; an undeployed model answers as it is.",
        tag: MODELS,
        responses: modelAnswer("The model; its deployment shows the progress."),
        errors: { ...notAnAdapter("undeployed"), ...modelNotFound(), ...QUEUE_DOWN },
      }),
    },
  };
}

export function managementPaths(): Record<string, JsonSchema> {
  return { ...accountPaths(), ...modelPaths(), ...lifecyclePaths() };
}
