import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import type { Hono } from "hono";
import { AppError } from "../errors.js";
import { pingDatabase } from "../db/queries/health.js";
import { HEARTH_VERSION } from "../package-info.js";
import { liveWorkers, type WorkerInfo } from "../jobs/worker-registry.js";
import type { AppDeps, AppEnv } from "./app-env.js";
import { openApiDocument } from "./contract/document.js";
import {
  cliTarballRoute,
  documentRoutes,
  healthRoute,
  readinessRoute,
  versionRoute,
  type Readiness,
} from "./contract/service.js";
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
        (w) => ({ redis: "ok" as const, workers: w.length, backends: countBackends(w) }),
        (e: Error) => ({ redis: down("redis")(e), workers: 0, backends: {} }),
      ),
    ]);
    const ready = database === "ok" && workers.redis === "ok" && workers.workers > 0;
    const body: Readiness = { status: ready ? "ready" : "not ready", database, ...workers };
    return c.json(body, ready ? 200 : 503);
  });
  mountRoute(app, versionRoute, async (c) => {
    const cli = await deps.cliPackage.get();
    const offered = cli && {
      version: cli.version,
      url: "/v1/cli/hearth.tgz",
      integrity: cli.integrity,
      size: cli.size,
    };
    return c.json({ version: HEARTH_VERSION, cli: offered }, 200);
  });
  mountRoute(app, cliTarballRoute, async () => {
    const cli = await deps.cliPackage.get();
    if (!cli) throw new AppError("unavailable", "This server has no CLI tarball to offer.");
    const body = Readable.toWeb(createReadStream(cli.file)) as ReadableStream<Uint8Array>;
    return new Response(body, {
      headers: {
        "content-type": "application/gzip",
        "content-length": String(cli.size),
        "content-disposition": `attachment; filename="hearth-${cli.version}.tgz"`,
      },
    });
  });
  const document = openApiDocument();
  for (const route of documentRoutes) mountRoute(app, route, (c) => c.json(document, 200));
}

/** Workers by the backend their language models use (image-only workers have none). */
function countBackends(workers: readonly WorkerInfo[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { backend } of workers) if (backend) counts[backend] = (counts[backend] ?? 0) + 1;
  return counts;
}
