import type { Hono } from "hono";
import { pingDatabase } from "../db/queries/health.js";
import { HEARTH_VERSION } from "../package-info.js";
import { liveWorkers } from "../queues/worker-registry.js";
import type { AppDeps, AppEnv } from "./app-env.js";
import { openApiDocument } from "./contract/document.js";
import { documentRoutes, healthRoute, readinessRoute, versionRoute, type Readiness } from "./contract/service.js";
import { mountRoute } from "./mount-route.js";

/**
 * The public routes: /healthz (the process answers), /readyz (the database, Redis and at
 * least one worker are up), the version and the OpenAPI document. No key needed.
 */
export function serviceRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, healthRoute, (c) => c.json({ status: "ok" as const }, 200));
  mountRoute(app, readinessRoute, async (c) => {
    // Unauthenticated: it says which dependency is down; why (hosts, users, drivers' words) goes to the log.
    const down = (dependency: string) => (e: Error) => {
      deps.log.warn("not ready", { dependency, error: e.message });
      return "down" as const;
    };
    const [database, workers] = await Promise.all([
      pingDatabase(deps.db).then(() => "ok" as const, down("database")),
      liveWorkers(deps.redis, deps.config.redisPrefix).then(
        (w) => ({ redis: "ok" as const, workers: w.length }),
        (e: Error) => ({ redis: down("redis")(e), workers: 0 }),
      ),
    ]);
    const ready = database === "ok" && workers.redis === "ok" && workers.workers > 0;
    const body: Readiness = { status: ready ? "ready" : "not ready", database, ...workers };
    return c.json(body, ready ? 200 : 503);
  });
  mountRoute(app, versionRoute, (c) => c.json({ version: HEARTH_VERSION }, 200));
  const document = openApiDocument();
  for (const route of documentRoutes) mountRoute(app, route, (c) => c.json(document, 200));
}
