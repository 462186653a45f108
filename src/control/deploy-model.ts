import { transitionDeployment } from "../db/queries/deployments.js";
import { AppError } from "../errors.js";
import { publishAdapterEvent } from "../jobs/adapter-events.js";
import type { LifecyclePayload } from "../jobs/jobs.js";
import { modelName, parseModelName } from "../domain/model-name.js";
import { ensureAdapterArtifact } from "./adapter-artifact.js";
import { transitionTarget, type ControlDeps } from "./control-deps.js";

export type LifecycleOutcome = "done" | "skipped" | "failed";

/**
 * The deploy job: converts the adapter if needed, marks the model DEPLOYED and tells
 * the workers of its base model. Idempotent: it acts only on a DEPLOYING deployment,
 * so a retry, a duplicate or a job overtaken by an undeploy does nothing. A problem
 * with the adapter itself fails the deployment (with the reason) instead of retrying.
 */
export async function deployModel(deps: ControlDeps, job: LifecyclePayload): Promise<LifecycleOutcome> {
  const target = await transitionTarget(deps, job, "DEPLOYING");
  if (!target) return "skipped";
  const { model, name } = target;
  const { accountId, modelId } = job;
  if (model?.kind !== "lora" || model.state !== "READY" || !model.baseModel) {
    await failDeployment(deps, job, `${name} is not a READY adapter.`);
    return "failed";
  }
  let key: string;
  try {
    key = await ensureAdapterArtifact(deps, model);
  } catch (cause) {
    if (cause instanceof AppError && cause.code === "invalid_request") {
      await failDeployment(deps, job, cause.message);
      return "failed";
    }
    throw cause;
  }
  const deployed = await transitionDeployment(deps.db, accountId, modelId, ["DEPLOYING"], "DEPLOYED", {
    artifactPath: key,
    deployedAt: new Date(),
  });
  if (!deployed) return "skipped";
  await deps.modelChanges.changed(name);
  const baseModelId = parseModelName(model.baseModel)!.modelId;
  // Workers load adapters on first use anyway; this only lets them warm up: with placement, the
  // one its requests will go to (a placement that fails leaves it to every worker, as without).
  const placed = await deps.placement?.place(baseModelId, key).catch(() => undefined);
  await publishAdapterEvent(deps.redis, deps.redisPrefix, {
    type: "deployed",
    model: name,
    baseModelId,
    adapterKey: key,
    ...(placed?.workerId ? { workerId: placed.workerId } : {}),
  }).catch((err: unknown) => deps.log.warn("could not announce a deployment", { model: name, error: String(err) }));
  deps.log.info("model deployed", { model: name, adapter: key });
  return "done";
}

/** Marks a DEPLOYING deployment FAILED with a reason (after the last retry, or at once for a bad adapter). */
export async function failDeployment(deps: ControlDeps, { accountId, modelId }: LifecyclePayload, reason: string) {
  const failed = await transitionDeployment(deps.db, accountId, modelId, ["DEPLOYING"], "FAILED", { reason });
  if (failed) deps.log.warn("deployment failed", { model: modelName(accountId, modelId), reason });
}
