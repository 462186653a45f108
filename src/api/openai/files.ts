import { Readable } from "node:stream";
import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  deleteFileRoute,
  fileContentRoute,
  getFileRoute,
  listFilesRoute,
  uploadFileForm,
  uploadFileRoute,
} from "../contract/batch/files-routes.js";
import { downloadHeaders } from "../file-download.js";
import { parseForm } from "../middleware/parse-body.js";
import { mountRoute } from "../mount-route.js";
import { cursorPage, fileObject } from "../services/batch-files.js";

/** The files API (docs/batch.md): upload a batch's input, list, read and delete files. */
export function filesRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { files } = management;
  mountRoute(app, uploadFileRoute, async (c) => {
    const { fields, files: parts } = await parseForm(c, uploadFileForm);
    const file = parts.get("file");
    const filename = file instanceof File && file.name ? file.name : "input.jsonl";
    const row = await files.upload(c.get("caller"), { purpose: fields.purpose, file, filename });
    return c.json(fileObject(row), 200);
  });
  mountRoute(app, listFilesRoute, async (c, { query }) => {
    return c.json(cursorPage(await files.list(c.get("caller"), query), fileObject), 200);
  });
  mountRoute(app, getFileRoute, async (c, { params }) =>
    c.json(fileObject(await files.get(c.get("caller"), params.file_id!)), 200),
  );
  mountRoute(app, fileContentRoute, async (c, { params }) => {
    const { file, body } = await files.content(c.get("caller"), params.file_id!);
    const answer = new Response(Readable.toWeb(body) as ReadableStream, { headers: downloadHeaders(file) });
    return answer as never;
  });
  mountRoute(app, deleteFileRoute, async (c, { params }) => {
    const row = await files.delete(c.get("caller"), params.file_id!);
    return c.json({ id: row.id, object: "file" as const, deleted: true as const }, 200);
  });
}
