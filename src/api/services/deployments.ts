import type { Db } from "../../db/client.js";
import {
  deleteDeployment,
  getDeployment,
  setDeploymentState,
  startDeployment,
  transitionDeployment,
} from "../../db/queries/deployments.js";
import { orUnavailable } from "../../db/unavailable.js";
import { AppError } from "../../errors.js";
import { modelName } from "../../model-name.js";
import type { LifecycleQueue } from "../../queues/lifecycle-queue.js";
import { undeployModel } from "../../workers/lifecycle/undeploy-model.js";
import type { LifecycleDeps } from "../../workers/lifecycle/lifecycle-deps.js";
import type { Caller } from "../app-env.js";
import type { ModelCatalog, ModelView } from "./model-catalog.js";

/**
 * Deploying and undeploying: the API side checks and records the request (within the
 * account's limit), the deploy/undeploy jobs do the work.
 */
export class Deployments {
  constructor(
    private readonly db: Db,
    private readonly catalog: ModelCatalog,
    private readonly queue: LifecycleQueue,
    private readonly lifecycle: LifecycleDeps,
  ) {}

  async deploy(caller: Caller, accountId: string, modelId: string): Promise<ModelView> {
    const name = modelName(accountId, modelId);
    const model = await this.catalog.owned(caller, accountId, modelId);
    if (model.kind === "base") {
      throw new AppError(
        "invalid_request",
        `${name} is a base model; every worker serves it, there is nothing to deploy.`,
      );
    }
    if (model.state !== "READY") {
      const why =
        model.state === "FAILED"
          ? `it FAILED validation: ${model.stateReason ?? "no reason recorded"}`
          : `it is ${model.state}`;
      throw new AppError(
        "invalid_request",
        `${name} cannot be deployed: ${why}. Only a READY model (uploaded and validated) can be deployed.`,
      );
    }
    const result = await orUnavailable(startDeployment(this.db, accountId, modelId));
    switch (result.outcome) {
      case "no-account":
        throw new AppError("not_found", `The account ${accountId} does not exist.`);
      case "limit":
        throw new AppError(
          "quota_exceeded",
          `Account ${accountId} already has ${result.limit} deployed models, its limit; undeploy one before deploying ${name}.`,
        );
      case "busy":
        throw new AppError("conflict", `${name} is being undeployed; deploy it again once that has finished.`);
      case "already":
        return this.catalog.view(model);
      case "started":
        try {
          await this.queue.enqueue("deploy", { accountId, modelId });
        } catch (error) {
          await transitionDeployment(this.db, accountId, modelId, ["DEPLOYING"], "FAILED", {
            reason: "The deploy could not be queued.",
          }).catch(() => {});
          throw error;
        }
        return this.catalog.view(model);
    }
  }

  async undeploy(caller: Caller, accountId: string, modelId: string): Promise<ModelView> {
    const model = await this.catalog.ownedLora(caller, accountId, modelId, "undeployed");
    const deployment = await orUnavailable(getDeployment(this.db, accountId, modelId));
    if (deployment?.state === "FAILED") {
      // Nothing reached the workers: forget the failed attempt.
      await orUnavailable(deleteDeployment(this.db, accountId, modelId));
    } else if (deployment?.state === "DEPLOYING" || deployment?.state === "DEPLOYED") {
      const moved = await orUnavailable(
        transitionDeployment(this.db, accountId, modelId, [deployment.state], "UNDEPLOYING", {
          artifactPath: deployment.artifactPath,
        }),
      );
      if (moved) {
        // Requests stop resolving it now, in every API process; the job then frees the adapter.
        await this.lifecycle.modelChanges.changed(modelName(accountId, modelId));
        await this.enqueueUndeploy(accountId, modelId, deployment.state);
      }
    }
    return this.catalog.view(model);
  }

  /** For a forced delete: undeploys now, in this request, instead of through the queue. */
  async undeployNow(accountId: string, modelId: string): Promise<void> {
    const deployment = await orUnavailable(getDeployment(this.db, accountId, modelId));
    if (!deployment) return;
    if (deployment.state !== "UNDEPLOYING") {
      await orUnavailable(
        setDeploymentState(this.db, accountId, modelId, "UNDEPLOYING", { artifactPath: deployment.artifactPath }),
      );
      await this.lifecycle.modelChanges.changed(modelName(accountId, modelId));
    }
    await orUnavailable(undeployModel(this.lifecycle, { accountId, modelId }));
  }

  private async enqueueUndeploy(accountId: string, modelId: string, previous: "DEPLOYING" | "DEPLOYED") {
    try {
      await this.queue.enqueue("undeploy", { accountId, modelId });
    } catch (error) {
      // Put it back as it was, so the request can simply be retried.
      await transitionDeployment(this.db, accountId, modelId, ["UNDEPLOYING"], previous).catch(() => {});
      throw error;
    }
  }
}
