import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  deleteFileRoute,
  deployModelRoute,
  undeployModelRoute,
  uploadFileRoute,
  validateModelRoute,
} from "../contract/management/lifecycle-routes.js";
import type { UploadedFile } from "../contract/management/resources.js";
import { mountRoute } from "../mount-route.js";
import { modelResource } from "../services/resources.js";

/**
 * An adapter's files (uploads stream straight to storage), its validation, and deploy and
 * undeploy, which answer at once with the model: its `deployment` shows the progress.
 */
export function lifecycleRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { uploads, catalog, deployments } = management;
  mountRoute(app, uploadFileRoute, async (c, { params }) => {
    const length = c.req.header("content-length");
    // A refused upload is answered before its body is read: the connection cannot be reused.
    c.header("connection", "close");
    const info = await uploads.putFile(
      c.get("caller"),
      params.account_id,
      params.model_id,
      params.file_name,
      c.req.raw.body as AsyncIterable<Uint8Array> | null,
      {
        contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
        sha256: c.req.header("x-content-sha256"),
      },
    );
    c.header("connection", undefined);
    return c.json({ name: info.fileName, size: info.size, sha256: info.sha256 ?? null } satisfies UploadedFile, 200);
  });
  mountRoute(app, deleteFileRoute, async (c, { params }) => {
    await uploads.deleteFile(c.get("caller"), params.account_id, params.model_id, params.file_name);
    return c.json({}, 200);
  });
  mountRoute(app, validateModelRoute, async (c, { params }) => {
    const { model, deployment } = await uploads.validate(c.get("caller"), params.account_id, params.model_id);
    return c.json(modelResource(model, deployment, await catalog.files(model)), 200);
  });
  mountRoute(app, deployModelRoute, async (c, { params }) => {
    const { model, deployment } = await deployments.deploy(c.get("caller"), params.account_id, params.model_id);
    return c.json(modelResource(model, deployment), 200);
  });
  mountRoute(app, undeployModelRoute, async (c, { params }) => {
    const { model, deployment } = await deployments.undeploy(c.get("caller"), params.account_id, params.model_id);
    return c.json(modelResource(model, deployment), 200);
  });
}
