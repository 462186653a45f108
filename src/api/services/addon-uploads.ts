import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { transitionModelState } from "../../db/queries/models.js";
import type { Model } from "../../db/schema/models.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { RedisMutex } from "../../redis/redis-mutex.js";
import { StoredBytes } from "./stored-bytes.js";
import {
  checkAddonFileName,
  readAddonManifest,
  validateAddon,
  type AddonManifest,
} from "../../models/adapters/index.js";
import type { BlobInfo, BlobStore } from "../../storage/blob-store.js";
import { storageKeys } from "../../storage/keys.js";
import type { Caller } from "../../domain/caller.js";
import { conversationConfigSchema } from "../contract/management/resources.js";
import type { ModelCatalog, ModelView } from "./model-catalog.js";
import { modelName, parseModelName } from "../../domain/model-name.js";
import { withAddonFiles } from "../../storage/addon-paths.js";

export interface UploadOptions {
  /** The Content-Length the client announced, to refuse an oversized file before reading it. */
  contentLength?: number;
  /** x-content-sha256: the SHA-256 (hex) the stored file must have. */
  sha256?: string;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * Uploading an addon's files and validating them. A file is stored whole or not at
 * all; validation checks everything against the base model before any worker sees it
 * and leaves the model READY, or FAILED with the reason.
 */
export class AddonUploads {
  constructor(
    private readonly db: Db,
    private readonly storage: BlobStore,
    private readonly catalog: ModelCatalog,
    private readonly config: Pick<Config, "maxUploadBytes" | "maxLoraRank">,
    commitLock: RedisMutex,
    private readonly log: Logger,
  ) {
    this.quota = new StoredBytes(db, storage, catalog, commitLock);
  }

  private readonly quota: StoredBytes;

  async putFile(
    caller: Caller,
    accountId: string,
    modelId: string,
    fileName: string,
    body: AsyncIterable<Uint8Array> | null,
    options: UploadOptions = {},
  ): Promise<BlobInfo & { fileName: string }> {
    const model = await this.changeableFiles(caller, accountId, modelId, fileName);
    if (options.sha256 !== undefined && !SHA256.test(options.sha256)) {
      throw new AppError("invalid_request", "x-content-sha256 must be 64 hexadecimal digits.", {
        param: "x-content-sha256",
      });
    }
    const key = storageKeys.modelFile(accountId, modelId, fileName);
    const perFile = this.config.maxUploadBytes;
    let limit = await this.quota.room(accountId, key, perFile);
    if (options.contentLength !== undefined && options.contentLength > limit.bytes) {
      throw new AppError(
        "payload_too_large",
        `${fileName} is ${options.contentLength} bytes, more than ${limit.what}; nothing was stored.`,
      );
    }
    if (!body) throw new AppError("invalid_request", `The request has no body: send the content of ${fileName}.`);
    // The limit above cuts the stream early; other uploads of the account may have been stored
    // since, so the file takes its key only once the quota is checked again (StoredBytes.guard).
    const guardCommit = this.quota.guard(accountId, key, perFile, {
      checked: (room) => {
        limit = room;
      },
    });
    const info = await this.storage
      .put(key, body, { maxBytes: limit.bytes, expectedSha256: options.sha256, guardCommit })
      .catch((cause: unknown) => {
        throw uploadProblem(cause, fileName, limit.what, options.sha256);
      });
    await this.reopen(model);
    return { ...info, fileName };
  }

  /** Removes an uploaded file (e.g. one of the wrong form); a missing file is fine. */
  async deleteFile(caller: Caller, accountId: string, modelId: string, fileName: string): Promise<void> {
    const model = await this.changeableFiles(caller, accountId, modelId, fileName);
    await this.storage.delete(storageKeys.modelFile(accountId, modelId, fileName));
    await this.reopen(model);
  }

  /** The model, if its files may change now: a LoRA model that is UPLOADING or FAILED. */
  private async changeableFiles(caller: Caller, accountId: string, modelId: string, fileName: string): Promise<Model> {
    const model = await this.catalog.ownedLora(caller, accountId, modelId, "uploaded to");
    checkAddonFileName(fileName);
    if (model.state !== "UPLOADING" && model.state !== "FAILED") {
      throw new AppError(
        "conflict",
        `${modelName(accountId, modelId)} is ${model.state}; its files can no longer change. Create a new model for new files.`,
      );
    }
    return model;
  }

  /** Changed files make an earlier verdict stale. */
  private async reopen(model: Model): Promise<void> {
    if (model.state === "FAILED") {
      await transitionModelState(this.db, model.accountId, model.modelId, ["FAILED"], "UPLOADING");
    }
  }

  async validate(caller: Caller, accountId: string, modelId: string): Promise<ModelView> {
    const model = await this.catalog.ownedLora(caller, accountId, modelId, "validated");
    if (model.state === "READY") return this.catalog.view(model);
    const claimed = await transitionModelState(this.db, accountId, modelId, ["UPLOADING", "FAILED"], "VALIDATING");
    if (!claimed) {
      throw new AppError("conflict", `${modelName(accountId, modelId)} is already being validated; try again shortly.`);
    }
    try {
      const ready = await this.check(caller, claimed);
      return this.catalog.view(ready);
    } catch (cause) {
      const error =
        cause instanceof AppError ? cause : new AppError("internal", "Validation failed unexpectedly.", { cause });
      if (error.code === "internal")
        this.log.error("validation failed", { model: modelName(accountId, modelId), error: String(cause) });
      await transitionModelState(this.db, accountId, modelId, ["VALIDATING"], "FAILED", {
        stateReason: error.message,
      }).catch((err: unknown) => this.log.error("could not mark model FAILED", { error: String(err) }));
      throw error;
    }
  }

  private check(caller: Caller, model: Model): Promise<Model> {
    return withAddonFiles(this.storage, model.accountId, model.modelId, (files) =>
      this.checkFiles(caller, model, files),
    );
  }

  private async checkFiles(caller: Caller, model: Model, files: Map<string, string>): Promise<Model> {
    if (files.size === 0) {
      throw new AppError(
        "invalid_request",
        "No files were uploaded: PUT the adapter's files first (see docs/addons.md).",
      );
    }
    const manifest = await readAddonManifest(files);
    const baseName = this.baseModelName(model, manifest);
    const base = await this.catalog.baseModel(caller, baseName.name, baseName.param).catch((error: unknown) => {
      throw baseName.from && error instanceof AppError
        ? new AppError(error.code, `${baseName.from}: ${error.message}`)
        : error;
    });
    const plan = await validateAddon(files, manifest, base.filePath!, { maxRank: this.config.maxLoraRank });
    // hearth.json's template is checked even when the model has its own, which wins.
    const fromFiles = manifest.conversationConfig
      ? await this.conversationConfig(manifest.conversationConfig, model.accountId)
      : null;
    const conversation = model.conversationConfig ?? fromFiles;
    const ready = await transitionModelState(this.db, model.accountId, model.modelId, ["VALIDATING"], "READY", {
      baseModel: baseName.name,
      adapterFormat: plan.format,
      adapterRank: plan.rank,
      contextLength: base.contextLength,
      conversationConfig: conversation,
    });
    if (!ready)
      throw new AppError("conflict", `${modelName(model.accountId, model.modelId)} changed while it was validated.`);
    return ready;
  }

  /**
   * The base model: the one given at creation, else the one the files name (hearth.json's
   * base_model, else adapter_config.json's base_model_name_or_path). A Hearth model name in
   * the files that differs from the one given at creation is a conflict; a Hugging Face
   * name in adapter_config.json is not a Hearth name, and says so.
   */
  private baseModelName(model: Model, manifest: AddonManifest): { name: string; param: string | null; from?: string } {
    const named = manifest.baseModel;
    const from = manifest.baseModelFrom;
    const isHearthName = named !== undefined && parseModelName(named) !== undefined;
    if (model.baseModel) {
      if (named !== undefined && named !== model.baseModel && (from === "hearth.json" || isHearthName)) {
        const key = from === "hearth.json" ? "base_model" : "base_model_name_or_path";
        throw new AppError(
          "invalid_request",
          `${from}: ${key} ${JSON.stringify(named)} differs from the model's baseModel ${JSON.stringify(model.baseModel)} given at creation.`,
        );
      }
      return { name: model.baseModel, param: null };
    }
    if (named === undefined) {
      throw new AppError(
        "invalid_request",
        'No base model: upload a hearth.json with {"base_model": "accounts/hearth/models/<id>"}, ' +
          "or give model.baseModel when creating the model. GET /v1/models lists the base models.",
      );
    }
    if (from === "adapter_config.json" && !isHearthName) {
      throw new AppError(
        "invalid_request",
        `adapter_config.json: base_model_name_or_path is ${JSON.stringify(named)}, which is not a Hearth model name. ` +
          "Name the Hearth base model this adapter was trained from: upload a hearth.json with " +
          '{"base_model": "accounts/hearth/models/<id>"} and validate again. GET /v1/models lists the base models.',
      );
    }
    return { name: named, param: null, from };
  }

  private async conversationConfig(value: Record<string, unknown>, owner: string) {
    const parsed = conversationConfigSchema.safeParse(value);
    const problem = parsed.success
      ? await this.catalog.templates.problem(parsed.data.template, owner)
      : parsed.error.issues[0]!.message;
    if (problem !== undefined) {
      throw new AppError(
        "invalid_request",
        `hearth.json: conversation_config must be {"template": "<Jinja chat template>"}: ${problem}.`,
      );
    }
    return parsed.data!;
  }
}

/** Says what went wrong with an upload in the client's terms (its file name, not a storage key). Nothing was stored. */
function uploadProblem(cause: unknown, fileName: string, limit: string, sha256: string | undefined): AppError {
  if (cause instanceof AppError && cause.code === "payload_too_large") {
    return new AppError("payload_too_large", `${fileName} is larger than ${limit}; nothing was stored.`, {
      cause,
    });
  }
  if (cause instanceof AppError && cause.code === "invalid_request" && sha256 !== undefined) {
    return new AppError(
      "invalid_request",
      `${fileName}: the content received does not have the SHA-256 given in x-content-sha256 (${sha256}); nothing was stored.`,
      { param: "x-content-sha256", cause },
    );
  }
  if (cause instanceof AppError) return cause;
  // The body stream failed: the client went away or the connection broke mid-upload.
  return new AppError(
    "invalid_request",
    `The upload of ${fileName} ended before the whole file arrived; nothing was stored.`,
    {
      cause,
    },
  );
}
