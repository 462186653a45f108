import { z } from "@hono/zod-openapi";
import { contractRoute, ok } from "../route.js";
import { cursorList } from "./cursor-list.js";

/** The files API (docs/batch.md): batches' input files, and the output and error files Hearth writes. */

const tag = "Files";

export const fileSchema = z
  .strictObject({
    id: z.string().openapi({ example: "file-6f1c…" }),
    object: z.literal("file"),
    bytes: z.number().int().min(0),
    created_at: z.number().int().openapi({ description: "Unix seconds." }),
    filename: z.string(),
    purpose: z.enum(["batch", "batch_output"]).openapi({
      description: "`batch`: a batch's input (uploaded); `batch_output`: a batch's output or error file (Hearth's).",
    }),
    status: z.literal("processed"),
    expires_at: z.null(),
    status_details: z.null(),
  })
  .openapi("File");
export type FileObject = z.infer<typeof fileSchema>;

export const fileListSchema = cursorList(fileSchema, "FileList");

export const uploadFileForm = z.object({
  purpose: z.string().openapi({ description: "`batch`: the only purpose Hearth takes." }),
  file: z.unknown().openapi({ type: "string", format: "binary", description: "The file: JSON lines." }),
});

export const listQuery = z.object({
  after: z.string().optional().openapi({ description: "The last ID of the previous page." }),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
  purpose: z.enum(["batch", "batch_output"]).optional(),
  order: z.enum(["asc", "desc"]).default("desc").openapi({ description: "Only `desc` (newest first) is served." }),
});

const fileParams = z.object({ file_id: z.string().openapi({ param: { name: "file_id", in: "path" } }) });
const notFound = "No such file of the key's account (another account's answers the same).";

export const uploadFileRoute = contractRoute({
  method: "post",
  path: "/v1/files",
  operationId: "createFile",
  scope: "inference",
  summary: "Upload a batch's input file",
  description:
    "multipart/form-data with `purpose` (`batch`) and `file` (JSON lines of requests, docs/batch.md). It counts in " +
    "the account's stored-bytes quota; its lines are checked when a batch is created from it.",
  tag,
  request: { body: { required: true, content: { "multipart/form-data": { schema: uploadFileForm } } } },
  responses: ok("The stored file.", fileSchema),
  errors: {
    invalid_request: "Not multipart/form-data, no `file`, or a purpose other than `batch`.",
    payload_too_large: "A file over `HEARTH_MAX_BATCH_FILE_BYTES`, or over what is left of the account's quota.",
    request_timeout: "The body did not arrive within `HEARTH_BODY_TIMEOUT_MS`.",
  },
});

export const listFilesRoute = contractRoute({
  method: "get",
  path: "/v1/files",
  operationId: "listFiles",
  scope: "inference",
  summary: "List the account's files",
  tag,
  request: { query: listQuery },
  responses: ok("The files, newest first.", fileListSchema),
  errors: {
    invalid_request: "A query parameter out of its range.",
    not_found: "`after` names no file of the account.",
  },
});

export const getFileRoute = contractRoute({
  method: "get",
  path: "/v1/files/{file_id}",
  operationId: "retrieveFile",
  scope: "inference",
  summary: "A file",
  tag,
  request: { params: fileParams },
  responses: ok("The file.", fileSchema),
  errors: { not_found: notFound },
});

export const fileContentRoute = contractRoute({
  method: "get",
  path: "/v1/files/{file_id}/content",
  operationId: "retrieveFileContent",
  scope: "inference",
  summary: "A file's content",
  tag,
  request: { params: fileParams },
  responses: {
    200: {
      description: "The file as it was stored: JSON lines.",
      content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  errors: { not_found: notFound },
});

export const deleteFileRoute = contractRoute({
  method: "delete",
  path: "/v1/files/{file_id}",
  operationId: "deleteFile",
  scope: "inference",
  summary: "Delete a file",
  tag,
  request: { params: fileParams },
  responses: ok(
    "It is gone.",
    z.strictObject({ id: z.string(), object: z.literal("file"), deleted: z.literal(true) }).openapi("DeletedFile"),
  ),
  errors: { not_found: notFound, conflict: "A batch that has not ended reads it: cancel the batch first." },
});
