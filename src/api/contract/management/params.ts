import { z } from "@hono/zod-openapi";
import { ADDON_FILE_NAMES } from "../../../models/adapters/addon-file-names.js";
import { ACCOUNT_ID_PATTERN, MODEL_ID_PATTERN } from "../../../domain/vocabulary.js";

/**
 * The path parameters of the management API. They are documented, not parsed: the services
 * answer an unknown account or model with 404 and a file name that is not an addon file with
 * a 400 naming file_name, whatever its shape.
 */

const accountId = z
  .string()
  .regex(ACCOUNT_ID_PATTERN)
  .openapi("AccountId", {
    param: {
      name: "account_id",
      in: "path",
      description:
        "The account's ID; only the key's own account (and, for reads, `hearth`'s public models) is visible.",
    },
  });

const modelId = z
  .string()
  .regex(MODEL_ID_PATTERN)
  .openapi("ModelId", {
    param: {
      name: "model_id",
      in: "path",
      description: "The model's ID, the last part of its name accounts/<account_id>/models/<model_id>.",
    },
  });

const fileName = z.enum(ADDON_FILE_NAMES).openapi("FileName", {
  param: {
    name: "file_name",
    in: "path",
    description: "One of the files an addon consists of (docs/addons.md); anything else is a 400 with param file_name.",
  },
});

export const accountParams = z.object({ account_id: accountId });
export const modelParams = z.object({ account_id: accountId, model_id: modelId });
export const fileParams = z.object({ account_id: accountId, model_id: modelId, file_name: fileName });
