import { z } from "@hono/zod-openapi";
import { MODEL_ID_PATTERN } from "../../../domain/vocabulary.js";
import { conversationConfigSchema } from "./resources.js";

/**
 * What the CLI and the Python client send to the management API. Field names are
 * camelCase, as in Fireworks' REST API. A chat template's shape is checked here; whether
 * it renders is checked by the service that saves it (it needs a template engine).
 */

const displayName = z.string().max(256);
const description = z.string().max(4096);

export const createModelBody = z
  .strictObject({
    modelId: z
      .string()
      .regex(MODEL_ID_PATTERN, "must be 1–63 lowercase letters, digits and hyphens, starting with a letter or digit")
      .openapi({
        description:
          "The new model's ID: 1–63 lowercase letters, digits and hyphens, starting with a letter or digit. Taken IDs are a 409.",
      }),
    model: z
      .strictObject({
        displayName: displayName.optional().openapi({ description: "Default: the modelId." }),
        description: description.optional(),
        baseModel: z
          .string()
          .min(1)
          .max(300)
          .optional()
          .openapi({
            description:
              "accounts/<account_id>/models/<model_id> of a READY base model you may use; " +
              "may instead come from base_model in the upload's hearth.json.",
          }),
        conversationConfig: conversationConfigSchema.optional().openapi({
          description: "The adapter's own chat template; default: from hearth.json, else the base model's.",
        }),
      })
      .default({}),
  })
  .openapi("CreateModelRequest");
export type CreateModelBody = z.infer<typeof createModelBody>;

export const updateModelBody = z
  .strictObject({
    displayName: displayName.optional(),
    description: description.optional(),
    conversationConfig: conversationConfigSchema
      .nullable()
      .optional()
      .openapi({ description: "The adapter's own chat template; null removes it." }),
  })
  .openapi("UpdateModelRequest");
export type UpdateModelBody = z.infer<typeof updateModelBody>;

export const listModelsQuery = z.object({
  pageSize: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ description: "Models per page, 1–200 (default 50)." }),
  pageToken: z.string().max(512).optional().openapi({ description: "The nextPageToken of the previous page." }),
  filter: z
    .string()
    .max(512)
    .optional()
    .openapi({
      description:
        "`field=value` terms joined by AND over state (UPLOADING, VALIDATING, READY, FAILED), kind (base, lora) " +
        "and baseModel, e.g. `state=READY AND kind=lora`.",
    }),
});

export const deleteModelQuery = z.object({
  force: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .openapi({
      description: "`true` undeploys a deployed model first; without it deleting a deployed model is a 409.",
    }),
});

/** x-content-sha256 of an upload: documented here, checked by the upload service (its message names the file). */
export const uploadHeaders = z.object({
  "x-content-sha256": z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .optional()
    .openapi({ description: "The SHA-256 (hex) the content must have; a mismatch is a 400 and stores nothing." }),
});
