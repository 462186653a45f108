import type { Db } from "../../db/client.js";
import { getDeployment } from "../../db/queries/deployments.js";
import { artifactInUse, deleteModel } from "../../db/queries/models.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { modelName } from "../../domain/model-name.js";
import type { ModelChangeNotifier } from "../../jobs/model-changes.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { storageKeys } from "../../storage/keys.js";
import type { Caller } from "../../domain/caller.js";
import type { Deployments } from "./deployments.js";
import type { ModelCatalog } from "./model-catalog.js";

/**
 * Deleting a model: refused while deployed unless forced (then undeployed first);
 * the row goes first, then its files and, unless another model shares it, its
 * converted adapter. A crash in between leaves unreferenced files, never a model
 * whose files are gone.
 */
export class ModelDeletion {
  constructor(
    private readonly db: Db,
    private readonly storage: BlobStore,
    private readonly catalog: ModelCatalog,
    private readonly deployments: Deployments,
    private readonly modelChanges: ModelChangeNotifier,
    private readonly log: Logger,
  ) {}

  async delete(caller: Caller, accountId: string, modelId: string, { force }: { force: boolean }): Promise<void> {
    const name = modelName(accountId, modelId);
    const model = await this.catalog.ownedLora(caller, accountId, modelId, "deleted");
    const deployment = await getDeployment(this.db, accountId, modelId);
    if (deployment && deployment.state !== "FAILED") {
      if (!force) {
        throw new AppError(
          "conflict",
          `${name} is ${deployment.state}; undeploy it first, or delete with ?force=true to undeploy and delete it.`,
        );
      }
      await this.deployments.undeployAndWait(accountId, modelId);
    }
    await deleteModel(this.db, accountId, modelId);
    await this.modelChanges.changed(name);
    try {
      await this.storage.delete(storageKeys.model(accountId, modelId));
      if (model.artifactKey && !(await artifactInUse(this.db, model.artifactKey, { accountId, modelId }))) {
        await this.storage.delete(model.artifactKey);
      }
    } catch (err) {
      this.log.warn("model deleted, but some of its files could not be removed", { model: name, error: String(err) });
    }
  }
}
