import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { upsertBaseModel } from "../db/queries/models.js";
import { BUILTIN_ACCOUNT_ID, modelName } from "../domain/model-name.js";
import type { Logger } from "../logger.js";
import { discoverBaseModels } from "../models/base/base-model-catalog.js";

/**
 * The operator's models, registered at start as public READY models of the built-in
 * account: every base GGUF of the model directory and every configured image model
 * (HEARTH_IMAGE_MODELS).
 */
export async function registerOperatorModels(db: Db, config: Config, log: Logger): Promise<void> {
  for (const base of await discoverBaseModels(config.modelDir, undefined, log)) {
    await upsertBaseModel(db, {
      modelId: base.id,
      filePath: base.path,
      contextLength: base.summary.contextLength,
      embeddingLength: base.summary.embeddingLength,
      displayName: base.id,
      description: base.summary.description ?? "",
    });
    log.info("registered base model", { model: modelName(BUILTIN_ACCOUNT_ID, base.id) });
  }
  for (const image of config.images.models) {
    await upsertBaseModel(db, {
      modelId: image.id,
      kind: "image",
      filePath: null,
      contextLength: null,
      embeddingLength: null,
      displayName: image.id,
      description:
        image.backend.kind === "sketch" ? "hearth-sketch: a procedural scene renderer, not a neural network." : "",
    });
    log.info("registered image model", { model: modelName(BUILTIN_ACCOUNT_ID, image.id), backend: image.backend.kind });
  }
}
