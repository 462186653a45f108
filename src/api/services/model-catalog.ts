import type { Db } from "../../db/client.js";
import { getAccount } from "../../db/queries/accounts.js";
import { getDeployment } from "../../db/queries/deployments.js";
import {
  countModels,
  createModel,
  getModel,
  getVisibleModel,
  listModelsPage,
  updateModel,
  type ModelPatch,
} from "../../db/queries/models.js";
import { BUILTIN_ACCOUNT_ID } from "../../db/schema/accounts.js";
import type { Deployment } from "../../db/schema/deployments.js";
import type { Model } from "../../db/schema/models.js";
import { AppError } from "../../errors.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { storageKeys } from "../../storage/keys.js";
import type { ModelChangeNotifier } from "../../jobs/model-changes.js";
import type { Caller } from "../../domain/caller.js";
import type { ConversationConfig, ModelFile } from "../contract/management/resources.js";
import type { AccountLimitsCache } from "./account-limits.js";
import type { ChatTemplateCheck } from "./chat-template-check.js";
import { modelName, parseModelName } from "../../domain/model-name.js";

export interface ModelView {
  model: Model;
  deployment: Deployment | null;
}

export interface CreateModelInput {
  modelId: string;
  displayName?: string;
  description?: string;
  baseModel?: string;
  conversationConfig?: ConversationConfig;
}

export interface ModelListPage {
  models: ModelView[];
  nextPageToken: string | undefined;
}

/**
 * Accounts' models as the management API sees them. Reads may see public models of
 * the built-in account; writes only the caller's own. Anything else is reported as
 * not found, exactly like a model that does not exist.
 */
export class ModelCatalog {
  constructor(
    private readonly db: Db,
    private readonly storage: BlobStore,
    private readonly modelChanges: ModelChangeNotifier,
    readonly templates: ChatTemplateCheck,
    readonly limits: AccountLimitsCache,
  ) {}

  async create(caller: Caller, accountId: string, input: CreateModelInput): Promise<ModelView> {
    this.ownAccount(caller, accountId);
    const { maxModels } = await this.limits.of(accountId);
    const count = await countModels(this.db, accountId);
    if (count >= maxModels) {
      throw new AppError(
        "quota_exceeded",
        `Account "${accountId}" has ${count} models, its quota of ${maxModels}: delete one, or ask an admin for more.`,
      );
    }
    if (input.baseModel !== undefined) await this.baseModel(caller, input.baseModel, "model.baseModel");
    if (input.conversationConfig) {
      await this.templates.check(input.conversationConfig.template, accountId, "model.conversationConfig.template");
    }
    const model = await createModel(this.db, {
      accountId,
      modelId: input.modelId,
      kind: "lora",
      state: "UPLOADING",
      displayName: input.displayName ?? input.modelId,
      description: input.description ?? "",
      baseModel: input.baseModel ?? null,
      conversationConfig: input.conversationConfig ?? null,
    });
    if (!model) {
      throw new AppError("conflict", `The model ${modelName(accountId, input.modelId)} already exists.`, {
        param: "modelId",
      });
    }
    return { model, deployment: null };
  }

  /** A model the caller may read (its own, or a public one). */
  async get(caller: Caller, accountId: string, modelId: string): Promise<ModelView> {
    const model = await getVisibleModel(this.db, caller.accountId, accountId, modelId);
    if (!model) throw modelNotFound(accountId, modelId);
    return { model, deployment: await getDeployment(this.db, accountId, modelId) };
  }

  /** A model the caller may change: only its own account's. */
  async owned(caller: Caller, accountId: string, modelId: string): Promise<Model> {
    const model = caller.accountId === accountId ? await getModel(this.db, accountId, modelId) : null;
    if (!model) throw modelNotFound(accountId, modelId);
    return model;
  }

  async ownedLora(caller: Caller, accountId: string, modelId: string, action: string): Promise<Model> {
    const model = await this.owned(caller, accountId, modelId);
    if (model.kind !== "lora") {
      throw new AppError(
        "invalid_request",
        `${modelName(accountId, modelId)} is a base model; only uploaded adapters can be ${action}.`,
      );
    }
    return model;
  }

  async view(model: Model): Promise<ModelView> {
    return { model, deployment: await getDeployment(this.db, model.accountId, model.modelId) };
  }

  async list(caller: Caller, accountId: string, page: Parameters<typeof listModelsPage>[2]): Promise<ModelListPage> {
    const publicOnly = accountId !== caller.accountId;
    if (publicOnly && accountId !== BUILTIN_ACCOUNT_ID) throw accountNotFound(accountId);
    const rows = await listModelsPage(this.db, accountId, {
      ...page,
      limit: page.limit + 1,
      filter: { ...page.filter, publicOnly },
    });
    const more = rows.length > page.limit;
    const models = rows.slice(0, page.limit);
    const views = await Promise.all(models.map((m) => this.view(m)));
    return { models: views, nextPageToken: more ? models.at(-1)!.modelId : undefined };
  }

  async update(caller: Caller, accountId: string, modelId: string, patch: ModelPatch): Promise<ModelView> {
    await this.owned(caller, accountId, modelId);
    const template = patch.conversationConfig?.template;
    if (typeof template === "string") await this.templates.check(template, accountId, "conversationConfig.template");
    const model = await updateModel(this.db, accountId, modelId, patch);
    if (!model) throw modelNotFound(accountId, modelId);
    // A PATCH may change what the name resolves to (its chat template, its visibility).
    await this.modelChanges.changed(modelName(accountId, modelId));
    return this.view(model);
  }

  async files(model: Model): Promise<ModelFile[]> {
    const prefix = storageKeys.modelFiles(model.accountId, model.modelId);
    const keys = await this.storage.list(prefix);
    const files: ModelFile[] = [];
    for (const key of keys) {
      const info = await this.storage.stat(key);
      if (info) files.push({ name: key.slice(prefix.length), size: info.size });
    }
    return files;
  }

  /**
   * The base model a name refers to, as the caller may see it; a 400 naming `param`
   * when there is none (the name is an argument here, not the resource addressed).
   */
  async baseModel(caller: Caller, name: string, param: string | null): Promise<Model> {
    const match = parseModelName(name);
    const model = match ? await getVisibleModel(this.db, caller.accountId, match.accountId, match.modelId) : null;
    if (model?.kind !== "base" || model.state !== "READY" || !model.filePath) {
      throw new AppError(
        "invalid_request",
        `Base model ${JSON.stringify(name)} does not exist or is not available to you; ` +
          "base models are named accounts/hearth/models/<model_id> (GET /v1/models lists them).",
        { param },
      );
    }
    return model;
  }

  ownAccount(caller: Caller, accountId: string): void {
    if (caller.accountId !== accountId) throw accountNotFound(accountId);
  }

  async account(caller: Caller) {
    const account = await getAccount(this.db, caller.accountId);
    if (!account) throw new AppError("unauthorized", "The API key's account no longer exists.");
    return account;
  }
}

export function modelNotFound(accountId: string, modelId: string): AppError {
  return new AppError(
    "not_found",
    `The model ${modelName(accountId, modelId)} does not exist or you do not have access to it.`,
  );
}

export function accountNotFound(accountId: string): AppError {
  return new AppError(
    "not_found",
    `The account ${JSON.stringify(accountId)} does not exist or you do not have access to it.`,
  );
}
