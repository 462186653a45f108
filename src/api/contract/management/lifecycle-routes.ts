import { z } from "@hono/zod-openapi";
import type { Reasons } from "../errors.js";
import { contractRoute, ok } from "../route.js";
import { modelAnswer, modelNotFound } from "./model-routes.js";
import { fileParams, modelParams } from "./params.js";
import { uploadHeaders } from "./requests.js";
import { deletedSchema, uploadedFileSchema } from "./resources.js";

/** An adapter's files, its validation, deploy and undeploy. */

const tag = "Models";

const notAnAdapter = (action: string): Reasons => ({
  invalid_request: `The model is a base model; only uploaded adapters can be ${action}.`,
});
const QUEUE_DOWN: Reasons = { unavailable: "The database or the job queue (Redis) is unavailable; retry shortly." };
const FILES_FROZEN = "The model is VALIDATING or READY: its files can no longer change.";

export const uploadFileRoute = contractRoute({
  method: "put",
  path: "/v1/accounts/{account_id}/models/{model_id}/files/{file_name}",
  operationId: "uploadModelFile",
  scope: "models",
  summary: "Upload one of an adapter's files",
  description:
    "The raw file content as the body (`curl --data-binary @file`), streamed to storage. A file is stored whole or not " +
    "at all and replaces an earlier one of the same name. Allowed while the model is UPLOADING or FAILED (a FAILED " +
    "model goes back to UPLOADING). The body limit is `HEARTH_MAX_UPLOAD_BYTES`, not `HEARTH_MAX_BODY_BYTES`.",
  tag,
  request: {
    params: fileParams,
    headers: uploadHeaders,
    body: {
      required: true,
      description: "The file's bytes (any Content-Type; application/octet-stream is best).",
      content: {
        // JSON Schema 2020-12's contentMediaType, which the generator's (3.0-era) types do not list.
        "application/octet-stream": {
          schema: z.string().openapi({ contentMediaType: "application/octet-stream" } as { description?: string }),
        },
      },
    },
  },
  responses: ok("The stored file.", uploadedFileSchema),
  errors: {
    invalid_request:
      'file_name is not an addon file (`param: "file_name"`); x-content-sha256 is malformed or does not match; ' +
      "there is no body; the model is a base model.",
    ...modelNotFound(),
    conflict: FILES_FROZEN,
    payload_too_large: "The file is larger than `HEARTH_MAX_UPLOAD_BYTES` (checked against Content-Length first).",
  },
});

export const deleteFileRoute = contractRoute({
  method: "delete",
  path: "/v1/accounts/{account_id}/models/{model_id}/files/{file_name}",
  operationId: "deleteModelFile",
  scope: "models",
  summary: "Remove one of an adapter's uploaded files",
  description:
    "For a model that is UPLOADING or FAILED, e.g. after uploading a file of the wrong form (a FAILED model goes " +
    "back to UPLOADING). Removing a file that is not there is fine.",
  tag,
  request: { params: fileParams },
  responses: ok("Removed.", deletedSchema),
  errors: {
    invalid_request: 'file_name is not an addon file (`param: "file_name"`); the model is a base model.',
    ...modelNotFound(),
    conflict: FILES_FROZEN,
  },
});

export const validateModelRoute = contractRoute({
  method: "post",
  path: "/v1/accounts/{account_id}/models/{model_id}/validate",
  operationId: "validateModel",
  scope: "models",
  summary: "Validate an adapter's files against its base model",
  description:
    "UPLOADING or FAILED → VALIDATING → READY, answered when done. On a problem the model becomes FAILED with the " +
    "reason as stateReason, and the answer is a 400 with the same message. A READY model answers as it is.",
  tag,
  request: { params: modelParams },
  responses: modelAnswer("The READY model, with its files."),
  errors: {
    invalid_request:
      "No files were uploaded; hearth.json or the adapter files are invalid or do not fit the base model; no base model " +
      "is known; the model is a base model. The model is now FAILED.",
    ...modelNotFound(),
    conflict: "The model is already being validated.",
  },
});

export const deployModelRoute = contractRoute({
  method: "post",
  path: "/v1/accounts/{account_id}/models/{model_id}/deploy",
  operationId: "deployModel",
  scope: "models",
  summary: "Deploy a READY adapter",
  description:
    "Answers at once: deployment.state is DEPLOYING, then DEPLOYED once converted (poll getModel), or FAILED with a " +
    "reason. Deploying a DEPLOYING or DEPLOYED model changes nothing.",
  tag,
  request: { params: modelParams },
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
});

export const undeployModelRoute = contractRoute({
  method: "post",
  path: "/v1/accounts/{account_id}/models/{model_id}/undeploy",
  operationId: "undeployModel",
  scope: "models",
  summary: "Undeploy an adapter",
  description:
    "Answers at once: deployment.state is UNDEPLOYING, then the deployment is null. New queries get 404 (not deployed) " +
    "at once; running ones finish. A FAILED deployment is simply removed; an undeployed model answers as it is.",
  tag,
  request: { params: modelParams },
  responses: modelAnswer("The model; its deployment shows the progress."),
  errors: { ...notAnAdapter("undeployed"), ...modelNotFound(), ...QUEUE_DOWN },
});
