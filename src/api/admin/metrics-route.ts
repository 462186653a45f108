import type { Hono } from "hono";
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import { AppError } from "../../errors.js";
import { workerMetricsKey } from "../../metrics/worker-metrics.js";
import { liveWorkers } from "../../jobs/worker-registry.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import { clientAddress } from "../client-address.js";
import { bearerToken, sameToken } from "../middleware/auth.js";
import { hearthQueues } from "../services/hearth-queues.js";

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/**
 * `GET /metrics`: Prometheus's text format, this API process's metrics and those the live
 * workers left in Redis with their last heartbeat. For `Authorization: Bearer` with
 * HEARTH_METRICS_TOKEN, or an admin key.
 */
export function metricsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  const { config, metrics } = deps;
  app.get("/metrics", async (c) => {
    const token = bearerToken(c.req.header("authorization"));
    if (!token)
      throw new AppError("unauthorized", "Send HEARTH_METRICS_TOKEN or an admin key as `Authorization: Bearer …`.");
    // The metrics token costs no query; anything else is a key, checked behind the
    // failed-authentication limit (a wrong token counts as a failure).
    if (!(config.metricsToken && sameToken(token, config.metricsToken))) {
      const key = await deps.credentials.apiKey(token, clientAddress(c, deps.proxies)).catch((error: unknown) => {
        if (error instanceof AppError && error.code === "unauthorized")
          throw new AppError("unauthorized", "Invalid metrics token or API key.");
        throw error;
      });
      if (!key.scopes.includes("admin"))
        throw new AppError("forbidden", "Metrics need the metrics token or a key with the admin scope.");
    }
    const workers = await liveWorkers(deps.redis, config.redisPrefix);
    for (const queue of await hearthQueues(deps.db, deps.queues, workers)) {
      const counts = await queue.getJobCounts("waiting", "prioritized", "active", "delayed", "failed");
      const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
      metrics.queueJobs.labels(queue.name, "waiting").set(waiting);
      for (const state of ["active", "delayed", "failed"] as const) {
        metrics.queueJobs.labels(queue.name, state).set(counts[state] ?? 0);
      }
    }
    const reported = await Promise.all(workers.map((w) => deps.redis.get(workerMetricsKey(config.redisPrefix, w.id))));
    const all: MetricsJson[] = [await metrics.registry.getMetricsAsJSON()];
    for (const json of reported) if (json) all.push(JSON.parse(json) as MetricsJson);
    const merged = AggregatorRegistry.aggregate(all);
    return c.body(await merged.metrics(), 200, { "content-type": merged.contentType, "cache-control": "no-store" });
  });
}
