import type { Account } from "../../db/schema/accounts.js";
import type { Caller } from "../app-env.js";
import type { Deployment } from "../../db/schema/deployments.js";
import type { Model } from "../../db/schema/models.js";
import { modelName } from "../../model-name.js";

/** How the management API shows its objects (one shape for every route that returns them). */

export interface ModelFile {
  name: string;
  size: number;
}

export function modelResource(model: Model, deployment: Deployment | null, files?: ModelFile[]) {
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
    conversationConfig: model.conversationConfig,
    public: model.public,
    createTime: model.createdAt.toISOString(),
    updateTime: model.updatedAt.toISOString(),
    deployment: deployment ? deploymentResource(deployment) : null,
    ...(files ? { files } : {}),
  };
}

export function deploymentResource(d: Deployment) {
  return {
    state: d.state,
    reason: d.reason,
    createTime: d.createdAt.toISOString(),
    updateTime: d.updatedAt.toISOString(),
    deployTime: d.deployedAt?.toISOString() ?? null,
  };
}

export function accountResource(a: Account) {
  return {
    name: `accounts/${a.id}`,
    accountId: a.id,
    displayName: a.displayName,
    enterprise: a.enterprise,
    maxDeployedModels: a.enterprise ? null : a.maxDeployedModels,
    createTime: a.createdAt.toISOString(),
  };
}

/** GET /v1/whoami: the key (its ID and the prefix listings show) and its account. */
export function whoAmIResource(caller: Caller, account: Account) {
  return {
    accountId: caller.accountId,
    keyId: caller.keyId,
    keyPrefix: caller.keyPrefix,
    role: caller.role,
    account: accountResource(account),
  };
}
