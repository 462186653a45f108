import type { Db } from "../../db/client.js";
import { getVisibleModel, listVisibleModels } from "../../db/queries/models.js";
import type { Model } from "../../db/schema/models.js";
import { orUnavailable } from "../../db/unavailable.js";
import { AppError } from "../../errors.js";
import type { ModelTarget } from "../../queues/jobs.js";

const NAME = /^accounts\/([a-z0-9][a-z0-9-]{0,62})\/models\/([a-z0-9][a-z0-9-]{0,62})$/;

export interface ResolvedModel {
  target: ModelTarget;
  contextLength: number | null;
  embeddingLength: number | null;
}

export interface ModelListing {
  name: string;
  accountId: string;
  kind: Model["kind"];
  contextLength: number | null;
  createdAt: Date;
}

export const modelName = (accountId: string, modelId: string) => `accounts/${accountId}/models/${modelId}`;

/**
 * The one place a model name becomes something to run: which base model's queue,
 * and (later) which adapter. A model the caller may not see is reported exactly
 * like one that does not exist.
 */
export class ModelResolver {
  constructor(private readonly db: Db) {}

  async forInference(callerAccountId: string, name: string): Promise<ResolvedModel> {
    const match = NAME.exec(name);
    const model = match ? await orUnavailable(getVisibleModel(this.db, callerAccountId, match[1]!, match[2]!)) : null;
    if (!model) {
      throw new AppError(
        "not_found",
        `The model \`${name}\` does not exist or you do not have access to it.` +
          (match ? "" : " Model names look like accounts/<account_id>/models/<model_id>; GET /v1/models lists yours."),
        { param: "model" },
      );
    }
    if (model.kind !== "base" || model.state !== "READY") {
      throw new AppError("not_found", `The model \`${name}\` is not deployed.`, { param: "model" });
    }
    return {
      target: { name, baseModelId: model.modelId },
      contextLength: model.contextLength,
      embeddingLength: model.embeddingLength,
    };
  }

  async list(callerAccountId: string): Promise<ModelListing[]> {
    const models = await orUnavailable(listVisibleModels(this.db, callerAccountId, { state: "READY" }));
    return models.map((m) => ({
      name: modelName(m.accountId, m.modelId),
      accountId: m.accountId,
      kind: m.kind,
      contextLength: m.contextLength,
      createdAt: m.createdAt,
    }));
  }
}
