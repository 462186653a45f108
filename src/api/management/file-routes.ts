import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { modelResource } from "./resources.js";

/** Uploading an adapter's files (streamed straight to storage) and validating them. */
export function fileRoutes({ management }: AppDeps) {
  const { uploads, catalog } = management;
  return new Hono<AppEnv>()
    .put("/accounts/:accountId/models/:modelId/files/:fileName", async (c) => {
      const length = c.req.header("content-length");
      // A refused upload is answered before its body is read: the connection cannot be reused.
      c.header("connection", "close");
      const info = await uploads.putFile(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
        c.req.param("fileName"),
        c.req.raw.body as AsyncIterable<Uint8Array> | null,
        {
          contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
          sha256: c.req.header("x-content-sha256"),
        },
      );
      c.header("connection", undefined);
      return c.json({ name: info.fileName, size: info.size, sha256: info.sha256 ?? null });
    })
    .delete("/accounts/:accountId/models/:modelId/files/:fileName", async (c) => {
      await uploads.deleteFile(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
        c.req.param("fileName"),
      );
      return c.json({});
    })
    .post("/accounts/:accountId/models/:modelId/validate", async (c) => {
      const { model, deployment } = await uploads.validate(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
      );
      return c.json(modelResource(model, deployment, await catalog.files(model)));
    });
}
