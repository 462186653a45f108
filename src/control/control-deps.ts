import type { RedisClient } from "../redis/connection.js";
import type { PrefixOwner } from "../redis/prefix-owner.js";
import type { Db } from "../db/client.js";
import { getDeployment } from "../db/queries/deployments.js";
import { getModel } from "../db/queries/models.js";
import type { DeploymentState } from "../domain/vocabulary.js";
import { modelName } from "../domain/model-name.js";
import type { LifecyclePayload } from "../jobs/jobs.js";
import type { Logger } from "../logger.js";
import type { Placement } from "../requests/placement.js";
import type { ModelChangeNotifier } from "../jobs/model-changes.js";
import type { BlobStore } from "../storage/blob-store.js";

/** What deploy and undeploy work with: they run where the database is (the API processes). */
export interface ControlDeps {
  db: Db;
  storage: BlobStore;
  /** A connection to publish adapter events on. */
  redis: RedisClient;
  redisPrefix: string;
  /** This Hearth, as the owner of `redisPrefix` (redis/prefix-owner.ts). */
  prefixOwner: PrefixOwner;
  /** Told once a deploy or undeploy is done, so that no API process serves a stale resolution. */
  modelChanges: ModelChangeNotifier;
  maxLoraRank: number;
  /** Adapter-aware placement (when on): a deploy names the worker that loads the adapter first. */
  placement?: Placement;
  log: Logger;
}

/**
 * What a deploy or undeploy job acts on: the model's deployment, if it is in the state the
 * job moves it from, and the model. Anything else means the job is a retry of finished
 * work, a duplicate, or overtaken by another transition: the handler leaves it alone.
 */
export async function transitionTarget(deps: ControlDeps, job: LifecyclePayload, from: DeploymentState) {
  const deployment = await getDeployment(deps.db, job.accountId, job.modelId);
  if (deployment?.state !== from) return undefined;
  const model = await getModel(deps.db, job.accountId, job.modelId);
  return { deployment, model, name: modelName(job.accountId, job.modelId) };
}
