import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { z } from "zod";
import type { createModelBody, updateModelBody } from "../api/contract/management/requests.js";
import type {
  AccountList,
  AccountResource,
  DeploymentResource,
  ModelPage,
  ModelResource,
  UploadedFile,
  WhoAmI,
} from "../api/contract/management/resources.js";
import type { AllAccounts, CreateAccountRequest, UpdateAccountRequest } from "../api/contract/admin/resources.js";
import type {
  ApiKeyList,
  ApiKeyResource,
  IssueApiKeyRequest,
  IssuedApiKey,
} from "../api/contract/management/api-key-resources.js";
import type { ServerVersion } from "../api/contract/service.js";
import type { UsageReport } from "../api/contract/management/usage-routes.js";
import { ApiTransport, type UploadOptions } from "./api-transport.js";

type UsageGrouping = UsageReport["groupBy"];

/**
 * A typed client of Hearth's management API (docs/api.md); batch-client.ts has the files and
 * batches. Request and answer types come from the HTTP contract's zod schemas (type imports
 * only: the CLI loads neither the server nor zod's OpenAPI extension). Failures are
 * HearthApiError (the server answered with an error) or HearthConnectionError (no answer).
 */

export type { AccountList, ModelPage, UploadedFile, WhoAmI };
export { HearthApiError, HearthConnectionError, normalizeServer, type UploadOptions } from "./api-transport.js";
export type Model = ModelResource;
export type Deployment = DeploymentResource;
export type Account = AccountResource;
export type CreateModelRequest = z.input<typeof createModelBody>;
export type UpdateModelRequest = z.input<typeof updateModelBody>;

export class HearthClient extends ApiTransport {
  version = () => this.call<ServerVersion>("GET", "/v1/version");
  whoami = () => this.call<WhoAmI>("GET", "/v1/whoami");
  listAccounts = () => this.call<AccountList>("GET", "/v1/accounts");
  getUsage = (accountId: string, query: { start?: string; end?: string; groupBy: UsageGrouping }) =>
    this.call<UsageReport>(
      "GET",
      `/v1/accounts/${encodeURIComponent(accountId)}/usage?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][])}`,
    );

  // The account's own API keys (a key with the models scope).
  listKeys = (accountId: string) => this.call<ApiKeyList>("GET", keysPath(accountId));
  issueKey = (accountId: string, body: IssueApiKeyRequest) =>
    this.call<IssuedApiKey>("POST", keysPath(accountId), body);
  revokeKey = (accountId: string, prefix: string) =>
    this.call<ApiKeyResource>("DELETE", `${keysPath(accountId)}/${encodeURIComponent(prefix)}`);

  // The admin endpoints (an admin key only).
  adminListAccounts = () => this.call<AllAccounts>("GET", "/v1/admin/accounts");
  adminCreateAccount = (body: CreateAccountRequest) => this.call<Account>("POST", "/v1/admin/accounts", body);
  adminUpdateAccount = (accountId: string, body: UpdateAccountRequest) =>
    this.call<Account>("PATCH", `/v1/admin/accounts/${encodeURIComponent(accountId)}`, body);
  adminIssueKey = (accountId: string, body: IssueApiKeyRequest) =>
    this.call<IssuedApiKey>("POST", `/v1/admin/accounts/${encodeURIComponent(accountId)}/api-keys`, body);
  adminListKeys = (accountId?: string) =>
    this.call<ApiKeyList>(
      "GET",
      `/v1/admin/api-keys${accountId === undefined ? "" : `?account_id=${encodeURIComponent(accountId)}`}`,
    );
  adminRevokeKey = (prefix: string) =>
    this.call<ApiKeyResource>("DELETE", `/v1/admin/api-keys/${encodeURIComponent(prefix)}`);

  listModels(
    accountId: string,
    query: { pageSize?: number; pageToken?: string; filter?: string } = {},
  ): Promise<ModelPage> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query))
      if (value !== undefined && value !== "") params.set(key, String(value));
    const search = params.size ? `?${params}` : "";
    return this.call("GET", `${modelsPath(accountId)}${search}`);
  }

  /** Every model of the account, page after page. */
  async *allModels(accountId: string, options: { filter?: string; pageSize?: number } = {}): AsyncGenerator<Model> {
    let pageToken: string | undefined;
    do {
      const page = await this.listModels(accountId, {
        pageSize: options.pageSize ?? 200,
        pageToken,
        filter: options.filter,
      });
      yield* page.models;
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
  }

  getModel = (accountId: string, modelId: string) => this.call<Model>("GET", modelPath(accountId, modelId));
  createModel = (accountId: string, body: CreateModelRequest) => this.call<Model>("POST", modelsPath(accountId), body);
  updateModel = (accountId: string, modelId: string, body: UpdateModelRequest) =>
    this.call<Model>("PATCH", modelPath(accountId, modelId), body);
  validateModel = (accountId: string, modelId: string) =>
    this.call<Model>("POST", `${modelPath(accountId, modelId)}/validate`);
  deployModel = (accountId: string, modelId: string) =>
    this.call<Model>("POST", `${modelPath(accountId, modelId)}/deploy`);
  undeployModel = (accountId: string, modelId: string) =>
    this.call<Model>("POST", `${modelPath(accountId, modelId)}/undeploy`);

  /**
   * Polls the model until its deployment is in `target` (null: gone) or FAILED, calling
   * onUpdate with every answer; returns the last answer, also when `timeoutMs` ran out.
   */
  async waitForDeployment(
    accountId: string,
    modelId: string,
    target: Deployment["state"] | null,
    options: { onUpdate?: (model: Model) => void; intervalMs?: number; timeoutMs?: number } = {},
  ): Promise<Model> {
    const deadline = Date.now() + (options.timeoutMs ?? Infinity);
    for (;;) {
      const model = await this.getModel(accountId, modelId);
      options.onUpdate?.(model);
      const state = model.deployment?.state ?? null;
      if (state === target || state === "FAILED" || Date.now() >= deadline) return model;
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
    }
  }

  async deleteModel(accountId: string, modelId: string, options: { force?: boolean } = {}): Promise<void> {
    await this.call("DELETE", `${modelPath(accountId, modelId)}${options.force ? "?force=true" : ""}`);
  }

  /** Removes one uploaded file of a model that is UPLOADING or FAILED. */
  async deleteFile(accountId: string, modelId: string, fileName: string): Promise<void> {
    await this.call("DELETE", `${modelPath(accountId, modelId)}/files/${encodeURIComponent(fileName)}`);
  }

  /** PUTs a local file as one of the model's files, with its SHA-256 so the server stores nothing corrupted. */
  async uploadFile(
    accountId: string,
    modelId: string,
    fileName: string,
    file: string,
    options: UploadOptions = {},
  ): Promise<UploadedFile> {
    const sha256 = await fileSha256(file, options.signal);
    return this.sendFile<UploadedFile>(
      `${modelPath(accountId, modelId)}/files/${encodeURIComponent(fileName)}`,
      { method: "PUT", file, headers: { "x-content-sha256": sha256 } },
      options,
    );
  }
}

const modelsPath = (accountId: string) => `/v1/accounts/${encodeURIComponent(accountId)}/models`;
const keysPath = (accountId: string) => `/v1/accounts/${encodeURIComponent(accountId)}/api-keys`;
const modelPath = (accountId: string, modelId: string) => `${modelsPath(accountId)}/${encodeURIComponent(modelId)}`;

async function fileSha256(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { signal })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
