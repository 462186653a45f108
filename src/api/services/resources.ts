import type { Account } from "../../db/schema/accounts.js";
import { effectiveLimits, type LimitDefaults } from "../../limits/effective-limits.js";
import type { Caller } from "../../domain/caller.js";
import type { Deployment } from "../../db/schema/deployments.js";
import type { Model } from "../../db/schema/models.js";
import { modelName } from "../../domain/model-name.js";
import type {
  AccountResource,
  DeploymentResource,
  ModelFile,
  ModelResource,
  WhoAmI,
} from "../contract/management/resources.js";

/** The management API's objects from the database's rows (their shapes are the contract's), for routes and services alike. */

export function modelResource(model: Model, deployment: Deployment | null, files?: ModelFile[]): ModelResource {
  return {
    name: modelName(model.accountId, model.modelId),
    accountId: model.accountId,
    modelId: model.modelId,
    kind: model.kind,
    displayName: model.displayName,
    description: model.description,
    baseModel: model.baseModel,
    state: model.state,
    stateReason: model.stateReason,
    format: model.adapterFormat,
    rank: model.adapterRank,
    contextLength: model.contextLength,
    // Written only through checked paths (the contract's conversationConfig, hearth.json, a GGUF's template).
    conversationConfig: model.conversationConfig as ModelResource["conversationConfig"],
    public: model.public,
    createTime: model.createdAt.toISOString(),
    updateTime: model.updatedAt.toISOString(),
    deployment: deployment ? deploymentResource(deployment) : null,
    ...(files ? { files } : {}),
  };
}

export function deploymentResource(d: Deployment): DeploymentResource {
  return {
    state: d.state,
    reason: d.reason,
    createTime: d.createdAt.toISOString(),
    updateTime: d.updatedAt.toISOString(),
    deployTime: d.deployedAt?.toISOString() ?? null,
  };
}

export function accountResource(a: Account, defaults: LimitDefaults): AccountResource {
  return {
    name: `accounts/${a.id}`,
    accountId: a.id,
    displayName: a.displayName,
    enterprise: a.enterprise,
    maxDeployedModels: a.enterprise ? null : a.maxDeployedModels,
    limits: effectiveLimits(a, defaults),
    createTime: a.createdAt.toISOString(),
  };
}

/** GET /v1/whoami: the key (its ID and the prefix listings show) and its account. */
export function whoAmIResource(caller: Caller, account: Account, defaults: LimitDefaults): WhoAmI {
  return {
    accountId: caller.accountId,
    keyId: caller.keyId,
    keyPrefix: caller.keyPrefix,
    scopes: [...caller.scopes],
    account: accountResource(account, defaults),
  };
}
