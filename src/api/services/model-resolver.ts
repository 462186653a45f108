import type { Db } from "../../db/client.js";
import { getModel, getVisibleModelWithDeployment, listServableModels } from "../../db/queries/models.js";
import type { Model } from "../../db/schema/models.js";
import { AppError } from "../../errors.js";
import { modelName, parseModelName } from "../../domain/model-name.js";
import type { ModelTarget } from "../../jobs/jobs.js";
import { TtlCache, type CacheTiming } from "../../ttl-cache.js";

const MAX_CACHED_RESOLUTIONS = 10_000;

export interface ResolvedModel {
  /** What the name names: a base model, a deployed adapter, or an image model. */
  kind: Model["kind"];
  target: ModelTarget;
  contextLength: number | null;
  embeddingLength: number | null;
}

export interface ModelListing {
  name: string;
  accountId: string;
  kind: Model["kind"];
  /** The base model of an adapter. */
  parent: string | null;
  contextLength: number | null;
  createdAt: Date;
}

/**
 * The one place a model name becomes something to run: which base model's queue,
 * and which adapter. A model the caller may not see is reported exactly like one
 * that does not exist; an adapter runs only while DEPLOYED.
 *
 * Resolutions are reused for a short while, per caller and name (errors are not);
 * `invalidate` drops them all, and is called on every model change (jobs/model-changes.ts).
 * The values are shared between requests: read them, never change them.
 */
export class ModelResolver {
  private readonly cache: TtlCache<string, ResolvedModel>;

  constructor(
    private readonly db: Db,
    /** ttlMs: how long a resolution is reused (HEARTH_MODEL_CACHE_TTL_MS); 0: every request asks the database. */
    timing: CacheTiming,
  ) {
    this.cache = new TtlCache({ ...timing, maxEntries: MAX_CACHED_RESOLUTIONS });
  }

  /** A text model (a base model or a deployed adapter) for the OpenAI endpoints. */
  async forInference(callerAccountId: string, name: string): Promise<ResolvedModel> {
    const resolved = await this.lookup(callerAccountId, name);
    if (resolved.kind === "image") {
      throw new AppError(
        "invalid_request",
        `\`${name}\` is an image model (kind image): generate images with POST /v1/image_generation/${name}.`,
        { param: "model" },
      );
    }
    return resolved;
  }

  /** An image model, for the image generation endpoints (the model is named by the path). */
  async forImages(callerAccountId: string, name: string): Promise<ResolvedModel> {
    const resolved = await this.lookup(callerAccountId, name);
    if (resolved.kind !== "image") {
      throw new AppError(
        "invalid_request",
        `\`${name}\` is a text model (kind ${resolved.kind}), not an image model; ` +
          "use it with /v1/completions or /v1/chat/completions. GET /v1/models lists the image models (kind image).",
        { param: "model" },
      );
    }
    return resolved;
  }

  private lookup(callerAccountId: string, name: string): Promise<ResolvedModel> {
    // Account IDs have no "/", so the key is unambiguous.
    return this.cache.getOrLoad(`${callerAccountId}/${name}`, () => this.resolve(callerAccountId, name));
  }

  /** Forgets every cached resolution (a model changed; a lora's also depends on its base model). */
  invalidate(): void {
    this.cache.clear();
  }

  private async resolve(callerAccountId: string, name: string): Promise<ResolvedModel> {
    const ref = parseModelName(name);
    const found = ref
      ? await getVisibleModelWithDeployment(this.db, callerAccountId, ref.accountId, ref.modelId)
      : null;
    if (!found) {
      throw new AppError(
        "not_found",
        `The model \`${name}\` does not exist or you do not have access to it.` +
          (ref ? "" : " Model names look like accounts/<account_id>/models/<model_id>; GET /v1/models lists yours."),
        { param: "model" },
      );
    }
    const { model, deployment } = found;
    const notDeployed = () =>
      new AppError(
        "not_found",
        `The model \`${name}\` is not deployed.` +
          (model.kind === "lora"
            ? ` Deploy it with POST /v1/accounts/${model.accountId}/models/${model.modelId}/deploy.`
            : ""),
        { param: "model" },
      );
    if (model.kind === "base" || model.kind === "image") {
      if (model.state !== "READY") throw notDeployed();
      return {
        kind: model.kind,
        target: { name, baseModelId: model.modelId },
        contextLength: model.contextLength,
        embeddingLength: model.embeddingLength,
      };
    }
    const base = model.baseModel ? parseModelName(model.baseModel) : undefined;
    if (deployment?.state !== "DEPLOYED" || !deployment.artifactPath || !base) throw notDeployed();
    const baseModel = await getModel(this.db, base.accountId, base.modelId);
    if (!baseModel) throw notDeployed();
    return {
      kind: "lora",
      target: {
        name,
        baseModelId: base.modelId,
        adapter: { key: deployment.artifactPath },
        ...(typeof model.conversationConfig?.template === "string"
          ? { chatTemplate: model.conversationConfig.template }
          : {}),
      },
      contextLength: baseModel.contextLength,
      embeddingLength: baseModel.embeddingLength,
    };
  }

  async list(callerAccountId: string): Promise<ModelListing[]> {
    const models = await listServableModels(this.db, callerAccountId);
    return models.map((m) => ({
      name: modelName(m.accountId, m.modelId),
      accountId: m.accountId,
      kind: m.kind,
      parent: m.baseModel,
      contextLength: m.contextLength,
      createdAt: m.createdAt,
    }));
  }
}
