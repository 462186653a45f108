import { JSON_BODY_LIMIT, type Reasons } from "../errors.js";
import { contractRoute, jsonContent, ok } from "../route.js";
import { accountParams, modelParams } from "./params.js";
import { createModelBody, deleteModelQuery, listModelsQuery, updateModelBody } from "./requests.js";
import { deletedSchema, modelPageSchema, modelSchema } from "./resources.js";

/** Create, read, list, update and delete an account's models. */

const tag = "Models";

export const modelNotFound = (what = "yours"): Reasons => ({
  not_found: `The model does not exist or is not ${what}: another account's model answers exactly like a missing one.`,
});

export const modelAnswer = (description: string) => ok(description, modelSchema);

export const createModelRoute = contractRoute({
  method: "post",
  path: "/v1/accounts/{account_id}/models",
  operationId: "createModel",
  scope: "models",
  summary: "Create an adapter model",
  description: "Creates a LoRA adapter model in state UPLOADING; then PUT its files and validate it.",
  tag,
  request: { params: accountParams, body: { required: true, content: jsonContent(createModelBody) } },
  responses: { 201: { description: "The new model (state UPLOADING, files: []).", content: jsonContent(modelSchema) } },
  errors: {
    invalid_request:
      "The body is invalid (`param` names the field, e.g. `modelId`); model.baseModel is not a READY base model the key may use.",
    not_found: "account_id is not the key's own account.",
    conflict: 'The modelId is taken in this account (`param: "modelId"`).',
    ...JSON_BODY_LIMIT,
  },
});

export const listModelsRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}/models",
  operationId: "listAccountModels",
  scope: "any",
  summary: "List an account's models",
  description:
    "The key's own account lists all its models; `hearth` lists its public base models. Ordered by model ID.",
  tag,
  request: { params: accountParams, query: listModelsQuery },
  responses: ok("One page of models.", modelPageSchema),
  errors: {
    invalid_request: "pageSize, pageToken or filter is invalid (`param` names it).",
    not_found: "account_id is neither the key's own account nor `hearth`.",
  },
});

export const getModelRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}/models/{model_id}",
  operationId: "getModel",
  scope: "any",
  summary: "Get a model",
  description: "An adapter's answer lists its uploaded files.",
  tag,
  request: { params: modelParams },
  responses: modelAnswer("The model."),
  errors: modelNotFound("yours or public"),
});

export const updateModelRoute = contractRoute({
  method: "patch",
  path: "/v1/accounts/{account_id}/models/{model_id}",
  operationId: "updateModel",
  scope: "models",
  summary: "Update a model's display name, description or chat template",
  tag,
  request: {
    params: modelParams,
    body: { required: true, description: "Only the fields given change.", content: jsonContent(updateModelBody) },
  },
  responses: modelAnswer("The updated model."),
  errors: { invalid_request: "The body is invalid (`param` names the field).", ...modelNotFound(), ...JSON_BODY_LIMIT },
});

export const deleteModelRoute = contractRoute({
  method: "delete",
  path: "/v1/accounts/{account_id}/models/{model_id}",
  operationId: "deleteModel",
  scope: "models",
  summary: "Delete an adapter model and its files",
  tag,
  request: { params: modelParams, query: deleteModelQuery },
  responses: ok("Deleted.", deletedSchema),
  errors: {
    invalid_request:
      "force is not `true` or `false`; the model is a base model (only uploaded adapters can be deleted).",
    ...modelNotFound(),
    conflict: "The model is deployed (or deploying, or undeploying) and force is not `true`.",
  },
});
