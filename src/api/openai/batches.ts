import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  cancelBatchRoute,
  createBatchRoute,
  getBatchRoute,
  listBatchesRoute,
} from "../contract/batch/batches-routes.js";
import { mountRoute } from "../mount-route.js";
import { cursorPage } from "../services/batch-files.js";
import { batchObject } from "../services/batches.js";

/** The batches API (docs/batch.md): create a batch from a file, read it, list them, cancel one. */
export function batchesRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { batches } = management;
  mountRoute(app, createBatchRoute, async (c, { body }) =>
    c.json(batchObject(await batches.create(c.get("caller"), body)), 200),
  );
  mountRoute(app, getBatchRoute, async (c, { params }) =>
    c.json(batchObject(await batches.get(c.get("caller"), params.batch_id!)), 200),
  );
  mountRoute(app, listBatchesRoute, async (c, { query }) => {
    return c.json(cursorPage(await batches.list(c.get("caller"), query), batchObject), 200);
  });
  mountRoute(app, cancelBatchRoute, async (c, { params }) =>
    c.json(batchObject(await batches.cancel(c.get("caller"), params.batch_id!)), 200),
  );
}
