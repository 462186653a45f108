import { Hono } from "hono";
import { pingDatabase } from "../db/queries/health.js";
import { liveWorkers } from "../queues/worker-registry.js";
import type { AppDeps } from "./app-env.js";

/** /healthz: the process answers. /readyz: the database, Redis and at least one worker are up. */
export function healthRoutes(deps: AppDeps) {
  return new Hono()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/readyz", async (c) => {
      const [database, workers] = await Promise.all([
        pingDatabase(deps.db).then(
          () => "ok",
          (e: Error) => `down: ${e.message}`,
        ),
        liveWorkers(deps.redis, deps.config.redisPrefix).then(
          (w) => ({ redis: "ok", workers: w.length }),
          (e: Error) => ({ redis: `down: ${e.message}`, workers: 0 }),
        ),
      ]);
      const ready = database === "ok" && workers.redis === "ok" && workers.workers > 0;
      return c.json({ status: ready ? "ready" : "not ready", database, ...workers }, ready ? 200 : 503);
    });
}
