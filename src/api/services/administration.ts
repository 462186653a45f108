import { issueApiKey } from "../../auth/api-keys.js";
import type { Db } from "../../db/client.js";
import { createAccount, getAccount, listAccounts, updateAccount } from "../../db/queries/accounts.js";
import { listApiKeys, revokeApiKey, type ApiKeySummary } from "../../db/queries/api-keys.js";
import type { Account } from "../../db/schema/accounts.js";
import { DEFAULT_KEY_SCOPES } from "../../domain/vocabulary.js";
import { AppError } from "../../errors.js";
import type { LimitDefaults } from "../../limits/effective-limits.js";
import type {
  ApiKeyResource,
  CreateAccountRequest,
  IssueApiKeyRequest,
  UpdateAccountRequest,
} from "../contract/admin/resources.js";
import type { AccountResource } from "../contract/management/resources.js";
import { accountResource } from "./resources.js";

/** Accounts and API keys, for the operators' endpoints (routes that need the admin scope). */
export class Administration {
  constructor(
    private readonly db: Db,
    /** The limits an account has unless an admin sets others (config.limits). */
    private readonly defaults: LimitDefaults,
    /** This process's caches, told of each change so that it applies here at once. */
    private readonly changed: { keyRevoked?(keyId: string): void; accountChanged?(accountId: string): void } = {},
  ) {}

  async accounts(): Promise<AccountResource[]> {
    return (await listAccounts(this.db)).map((a) => accountResource(a, this.defaults));
  }

  async createAccount(request: CreateAccountRequest): Promise<AccountResource> {
    return accountResource(await this.insertAccount(request), this.defaults);
  }

  async updateAccount(accountId: string, request: UpdateAccountRequest): Promise<AccountResource> {
    const { limits, ...fields } = request;
    const account = await updateAccount(this.db, accountId, { ...fields, ...limits });
    if (!account) throw new AppError("not_found", `Account "${accountId}" does not exist.`, { param: "account_id" });
    this.changed.accountChanged?.(accountId);
    return accountResource(account, this.defaults);
  }

  private async insertAccount(request: CreateAccountRequest): Promise<Account> {
    const account = await createAccount(this.db, {
      id: request.accountId,
      displayName: request.displayName ?? request.accountId,
      enterprise: request.enterprise ?? false,
      maxDeployedModels: request.maxDeployedModels,
    });
    if (!account) {
      throw new AppError("conflict", `Account "${request.accountId}" already exists.`, { param: "accountId" });
    }
    return account;
  }

  async issueKey(accountId: string, request: IssueApiKeyRequest): Promise<{ key: string; apiKey: ApiKeyResource }> {
    const { key, apiKey } = await issueApiKey(this.db, {
      accountId,
      name: request.name ?? "default",
      scopes: request.scopes ?? DEFAULT_KEY_SCOPES,
      ...(request.expireTime !== undefined ? { expiresAt: new Date(request.expireTime) } : {}),
    });
    return { key, apiKey: apiKeyResource(apiKey) };
  }

  async keys(accountId: string | undefined): Promise<ApiKeyResource[]> {
    if (accountId !== undefined && !(await getAccount(this.db, accountId))) {
      throw new AppError("not_found", `Account "${accountId}" does not exist.`, { param: "account_id" });
    }
    return (await listApiKeys(this.db, accountId)).map(apiKeyResource);
  }

  async revokeKey(prefix: string): Promise<ApiKeyResource> {
    const key = await revokeApiKey(this.db, { prefix });
    if (!key) throw new AppError("not_found", `No API key has the prefix "${prefix}".`, { param: "prefix" });
    this.changed.keyRevoked?.(key.id);
    return apiKeyResource(key);
  }
}

function apiKeyResource(k: ApiKeySummary): ApiKeyResource {
  return {
    prefix: k.prefix,
    accountId: k.accountId,
    name: k.name,
    scopes: k.scopes,
    createTime: k.createdAt.toISOString(),
    lastUseTime: k.lastUsedAt?.toISOString() ?? null,
    expireTime: k.expiresAt?.toISOString() ?? null,
    revokeTime: k.revokedAt?.toISOString() ?? null,
  };
}
