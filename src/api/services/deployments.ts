import type { Db } from "../../db/client.js";
import {
  deleteDeployment,
  getDeployment,
  setDeploymentState,
  startDeployment,
  transitionDeployment,
} from "../../db/queries/deployments.js";
import type { Deployment } from "../../db/schema/deployments.js";
import { AppError } from "../../errors.js";
import { modelName } from "../../domain/model-name.js";
import type { LifecycleQueue } from "../../jobs/lifecycle-queue.js";
import type { Logger } from "../../logger.js";
import type { ModelChangeNotifier } from "../../jobs/model-changes.js";
import type { Caller } from "../../domain/caller.js";
import type { ModelCatalog, ModelView } from "./model-catalog.js";

/** How long a forced delete waits for its undeploy job. */
const FORCED_UNDEPLOY_WAIT_MS = 30_000;
const FORCED_UNDEPLOY_POLL_MS = 50;

/**
 * Deploying and undeploying: the API side checks and records the request (within the
 * account's limit), the deploy/undeploy jobs of the control room (src/control) do the
 * work. Every transition past the request's own goes through the queue.
 */
export class Deployments {
  constructor(
    private readonly db: Db,
    private readonly catalog: ModelCatalog,
    private readonly queue: LifecycleQueue,
    private readonly modelChanges: ModelChangeNotifier,
    private readonly log: Logger,
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
    const result = await startDeployment(this.db, accountId, modelId);
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
          await this.compensate(name, () =>
            transitionDeployment(this.db, accountId, modelId, ["DEPLOYING"], "FAILED", {
              reason: "The deploy could not be queued.",
            }),
          );
          throw error;
        }
        return this.catalog.view(model);
    }
  }

  async undeploy(caller: Caller, accountId: string, modelId: string): Promise<ModelView> {
    const model = await this.catalog.ownedLora(caller, accountId, modelId, "undeployed");
    const deployment = await getDeployment(this.db, accountId, modelId);
    if (deployment?.state === "FAILED") {
      // Nothing reached the workers: forget the failed attempt.
      await deleteDeployment(this.db, accountId, modelId);
    } else if (deployment?.state === "DEPLOYING" || deployment?.state === "DEPLOYED") {
      const moved = await transitionDeployment(this.db, accountId, modelId, [deployment.state], "UNDEPLOYING", {
        artifactPath: deployment.artifactPath,
      });
      if (moved) {
        // Requests stop resolving it now, in every API process; the job then frees the adapter.
        await this.modelChanges.changed(modelName(accountId, modelId));
        await this.enqueueUndeploy(accountId, modelId, deployment.state);
      }
    }
    return this.catalog.view(model);
  }

  /**
   * For a forced delete: undeploys through the queue, like any undeploy, and waits until
   * the job has removed the deployment (the workers have been told to free the adapter).
   */
  async undeployAndWait(accountId: string, modelId: string): Promise<void> {
    const deployment = await getDeployment(this.db, accountId, modelId);
    if (!deployment) return;
    const name = modelName(accountId, modelId);
    if (deployment.state === "UNDEPLOYING") {
      // Its job may have been lost with Redis; another one is harmless (the handler is idempotent).
      await this.queue.enqueue("undeploy", { accountId, modelId });
    } else {
      await setDeploymentState(this.db, accountId, modelId, "UNDEPLOYING", { artifactPath: deployment.artifactPath });
      await this.modelChanges.changed(name);
      await this.enqueueUndeploy(accountId, modelId, deployment.state);
    }
    const deadline = Date.now() + FORCED_UNDEPLOY_WAIT_MS;
    while (await getDeployment(this.db, accountId, modelId)) {
      if (Date.now() > deadline) {
        throw new AppError("unavailable", `${name} is still being undeployed; retry the delete shortly.`);
      }
      await new Promise((resolve) => setTimeout(resolve, FORCED_UNDEPLOY_POLL_MS));
    }
  }

  private async enqueueUndeploy(accountId: string, modelId: string, previous: Deployment["state"]) {
    try {
      await this.queue.enqueue("undeploy", { accountId, modelId });
    } catch (error) {
      // Put it back as it was, so the request can simply be retried.
      await this.compensate(modelName(accountId, modelId), () =>
        transitionDeployment(this.db, accountId, modelId, ["UNDEPLOYING"], previous),
      );
      throw error;
    }
  }

  /**
   * Undoes a transition whose job could not be queued. If that fails too (the database
   * went away with Redis), the model is left in the transition's state: logged, since
   * only an operator or a later request will move it on.
   */
  private async compensate(name: string, undo: () => Promise<unknown>): Promise<void> {
    try {
      await undo();
    } catch (err) {
      this.log.error("could not undo a deployment transition whose job was not queued", {
        model: name,
        error: String(err),
      });
    }
  }
}
