import { issueApiKey } from "../../auth/api-keys.js";
import type { Db } from "../../db/client.js";
import { createAccount, getAccount, listAccounts } from "../../db/queries/accounts.js";
import { listApiKeys, revokeApiKey, type ApiKeySummary } from "../../db/queries/api-keys.js";
import type { Account } from "../../db/schema/accounts.js";
import { DEFAULT_KEY_SCOPES } from "../../domain/vocabulary.js";
import { AppError } from "../../errors.js";
import type { ApiKeyResource, CreateAccountRequest, IssueApiKeyRequest } from "../contract/admin/resources.js";

/** Accounts and API keys, for the operators' endpoints (routes that need the admin scope). */
export class Administration {
  constructor(
    private readonly db: Db,
    /** Told of each key revoked, so that this process stops accepting it at once. */
    private readonly onRevoked: (keyId: string) => void = () => {},
  ) {}

  accounts(): Promise<Account[]> {
    return listAccounts(this.db);
  }

  async createAccount(request: CreateAccountRequest): Promise<Account> {
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
    this.onRevoked(key.id);
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
