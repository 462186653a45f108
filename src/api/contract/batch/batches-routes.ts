import { z } from "@hono/zod-openapi";
import { BATCH_ENDPOINTS, BATCH_STATUSES } from "../../../domain/batch.js";
import { contractRoute, jsonContent, ok } from "../route.js";
import { cursorList } from "./cursor-list.js";

/** The batches API (docs/batch.md), in OpenAI's shape. */

const tag = "Batches";
const time = z.number().int().nullable().openapi({ description: "Unix seconds; null until it happens." });

export const batchSchema = z
  .strictObject({
    id: z.string().openapi({ example: "batch_3b0c…" }),
    object: z.literal("batch"),
    endpoint: z.enum(BATCH_ENDPOINTS),
    errors: z
      .strictObject({
        object: z.literal("list"),
        data: z.array(
          z.strictObject({
            code: z.string(),
            message: z.string(),
            param: z.string().nullable(),
            line: z.number().int().nullable().openapi({ description: "The input file's line, from 1." }),
          }),
        ),
      })
      .nullable()
      .openapi({ description: "Why the batch failed validation; null otherwise." }),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum(BATCH_STATUSES),
    output_file_id: z.string().nullable(),
    error_file_id: z.string().nullable(),
    created_at: z.number().int(),
    in_progress_at: time,
    expires_at: z.number().int(),
    finalizing_at: time,
    completed_at: time,
    failed_at: time,
    expired_at: time,
    cancelling_at: time,
    cancelled_at: time,
    request_counts: z.strictObject({
      total: z.number().int(),
      completed: z.number().int().openapi({ description: "Lines answered with a 2xx." }),
      failed: z.number().int().openapi({ description: "Lines answered with an error." }),
    }),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .openapi("Batch");
export type BatchObject = z.infer<typeof batchSchema>;

export const createBatchRequest = z
  .strictObject({
    input_file_id: z.string().min(1),
    endpoint: z.enum(BATCH_ENDPOINTS),
    completion_window: z.string().default("24h").openapi({
      description: "How long the batch may run: hours or days from 1h to 7d (`24h`, OpenAI's, by default).",
    }),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, { message: "at most 16 keys" })
      .nullable()
      .optional(),
  })
  .openapi("CreateBatchRequest");

const batchParams = z.object({ batch_id: z.string().openapi({ param: { name: "batch_id", in: "path" } }) });
const notFound = "No such batch of the key's account (another account's answers the same).";

export const createBatchRoute = contractRoute({
  method: "post",
  path: "/v1/batches",
  operationId: "createBatch",
  scope: "inference",
  summary: "Run a file of requests as a batch",
  description:
    "The batch starts `validating`: every line is checked before any runs, and one bad line fails the batch with its " +
    "line number in `errors`. Its lines then run below every interactive request, under the account's limits.",
  tag,
  request: { body: { required: true, content: jsonContent(createBatchRequest) } },
  responses: ok("The batch.", batchSchema),
  errors: {
    invalid_request: "A field is missing or wrong, the file is not a batch input, or the window is out of range.",
    not_found: "input_file_id names no file of the account.",
  },
});

export const getBatchRoute = contractRoute({
  method: "get",
  path: "/v1/batches/{batch_id}",
  operationId: "retrieveBatch",
  scope: "inference",
  summary: "A batch",
  tag,
  request: { params: batchParams },
  responses: ok("The batch.", batchSchema),
  errors: { not_found: notFound },
});

export const listBatchesRoute = contractRoute({
  method: "get",
  path: "/v1/batches",
  operationId: "listBatches",
  scope: "inference",
  summary: "List the account's batches",
  tag,
  request: {
    query: z.object({
      after: z.string().optional().openapi({ description: "The last ID of the previous page." }),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
  },
  responses: ok("The batches, newest first.", cursorList(batchSchema, "BatchList")),
  errors: { invalid_request: "limit out of range.", not_found: "`after` names no batch of the account." },
});

export const cancelBatchRoute = contractRoute({
  method: "post",
  path: "/v1/batches/{batch_id}/cancel",
  operationId: "cancelBatch",
  scope: "inference",
  summary: "Cancel a batch",
  description:
    "A batch that has not ended moves to `cancelling`: no new line starts, the running ones are stopped, and it ends " +
    "`cancelled` with the results so far in its output and error files. An ended batch is answered as it is.",
  tag,
  request: { params: batchParams },
  responses: ok("The batch, cancelling (or as it ended).", batchSchema),
  errors: { not_found: notFound },
});
