import type { RedisClient } from "../../redis/connection.js";
import type { Db } from "../../db/client.js";
import { listDeployments } from "../../db/queries/deployments.js";
import { modelName } from "../../domain/model-name.js";
import { DEPLOYMENT_STATES, type DeploymentState } from "../../domain/vocabulary.js";
import type { ProducerQueues } from "../../jobs/producer-queues.js";
import { liveWorkers } from "../../jobs/worker-registry.js";
import { hearthQueues } from "./hearth-queues.js";

/** What the operators' overview (`/admin`) shows: workers, deployments, queues. */
export interface Overview {
  workers: {
    id: string;
    host: string;
    pid: number;
    roles: string[];
    models: string[];
    adapters: number;
    requests: number;
    heartbeatAgeMs: number | null;
    startedAt: string;
  }[];
  deployments: {
    byState: Record<DeploymentState, number>;
    /** Transitions that have not moved for longer than `stuckAfterMs`. */
    stuck: { name: string; state: DeploymentState; sinceMs: number }[];
    stuckAfterMs: number;
  };
  queues: {
    name: string;
    waiting: number;
    active: number;
    delayed: number;
    failed: number;
    oldestWaitingMs: number | null;
  }[];
}

export interface OverviewSources {
  db: Db;
  redis: RedisClient;
  queues: ProducerQueues;
  prefix: string;
  stuckAfterMs: number;
}

export async function operationsOverview(sources: OverviewSources, now = Date.now()): Promise<Overview> {
  const [workers, deployments] = await Promise.all([
    liveWorkers(sources.redis, sources.prefix),
    listDeployments(sources.db),
  ]);
  const queues = await hearthQueues(sources.db, sources.queues, workers);
  const byState = Object.fromEntries(DEPLOYMENT_STATES.map((s) => [s, 0])) as Record<DeploymentState, number>;
  for (const d of deployments) byState[d.state]++;
  const stuck = deployments
    .filter(
      (d) =>
        (d.state === "DEPLOYING" || d.state === "UNDEPLOYING") && now - d.updatedAt.getTime() > sources.stuckAfterMs,
    )
    .map((d) => ({ name: modelName(d.accountId, d.modelId), state: d.state, sinceMs: now - d.updatedAt.getTime() }));
  return {
    workers: workers.map((w) => ({
      id: w.id,
      host: w.host,
      pid: w.pid,
      roles: w.roles,
      models: [...w.models, ...w.imageModels.map((m) => m.id)],
      adapters: (w.serving ?? []).reduce((n, s) => n + s.adapters, 0),
      requests: (w.serving ?? []).reduce((n, s) => n + s.requests, 0),
      heartbeatAgeMs: w.beatAt ? now - Date.parse(w.beatAt) : null,
      startedAt: w.startedAt,
    })),
    deployments: { byState, stuck, stuckAfterMs: sources.stuckAfterMs },
    queues: await Promise.all(
      queues.map(async (queue) => {
        const counts = await queue.getJobCounts("waiting", "prioritized", "active", "delayed", "failed");
        const [oldest] = await queue.getJobs(["waiting", "prioritized"], 0, 0, true);
        return {
          name: queue.name,
          waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
          active: counts.active ?? 0,
          delayed: counts.delayed ?? 0,
          failed: counts.failed ?? 0,
          oldestWaitingMs: oldest ? now - oldest.timestamp : null,
        };
      }),
    ),
  };
}
