import { artifactDeployed, deleteDeployment } from "../db/queries/deployments.js";
import { publishAdapterEvent } from "../jobs/adapter-events.js";
import type { LifecyclePayload } from "../jobs/jobs.js";
import { parseModelName } from "../domain/model-name.js";
import type { LifecycleOutcome } from "./deploy-model.js";
import { transitionTarget, type ControlDeps } from "./control-deps.js";

/**
 * The undeploy job: removes an UNDEPLOYING deployment and tells the workers to free
 * the adapter (they let in-flight generations finish). New requests already get 404:
 * only DEPLOYED models resolve, and whoever moved it to UNDEPLOYING told the API
 * processes (jobs/model-changes.ts); so does this job, once done. Idempotent:
 * anything but UNDEPLOYING is left alone.
 */
export async function undeployModel(deps: ControlDeps, job: LifecyclePayload): Promise<LifecycleOutcome> {
  const target = await transitionTarget(deps, job, "UNDEPLOYING");
  if (!target) return "skipped";
  const { deployment, model, name } = target;
  const { accountId, modelId } = job;
  const key = deployment.artifactPath;
  const baseModelId = model?.baseModel ? parseModelName(model.baseModel)?.modelId : undefined;
  if (key && baseModelId) {
    const stillDeployed = await artifactDeployed(deps.db, key, { accountId, modelId });
    await publishAdapterEvent(deps.redis, deps.redisPrefix, {
      type: "undeployed",
      model: name,
      baseModelId,
      adapterKey: key,
      stillDeployed,
    });
  }
  await deleteDeployment(deps.db, accountId, modelId);
  await deps.modelChanges.changed(name);
  deps.log.info("model undeployed", { model: name });
  return "done";
}
