import { issueApiKey } from "../../auth/api-keys.js";
import type { Db } from "../../db/client.js";
import { getAccount } from "../../db/queries/accounts.js";
import { findActiveApiKey, listApiKeys, revokeApiKey, type ApiKeySummary } from "../../db/queries/api-keys.js";
import type { Caller } from "../../domain/caller.js";
import { DEFAULT_KEY_SCOPES, type ApiKeyScope } from "../../domain/vocabulary.js";
import { AppError } from "../../errors.js";
import type { ApiKeyResource, IssueApiKeyRequest, IssuedApiKey } from "../contract/management/api-key-resources.js";
import { accountNotFound } from "./model-catalog.js";

/**
 * API keys: any account's, for the operators (the admin endpoints, `npm run admin`, the
 * operators' pages), and an account's own, for a key of it with the models scope (the account
 * endpoints and the account page). docs/security.md says who may do what; the rules are here.
 */
export class AccountKeys {
  constructor(
    private readonly db: Db,
    /** This process's caches, told of each revocation so that it applies here at once. */
    private readonly changed: { keyRevoked?(keyId: string): void } = {},
  ) {}

  /** A new key for any account (but the built-in one): shown this once. */
  async issue(accountId: string, request: IssueApiKeyRequest): Promise<IssuedApiKey> {
    return this.insert(accountId, {
      name: request.name,
      scopes: request.scopes ?? DEFAULT_KEY_SCOPES,
      expiresAt: request.expireTime === undefined ? undefined : new Date(request.expireTime),
    });
  }

  /** Every account's keys, or one account's (404 when it does not exist); oldest first. */
  async list(accountId: string | undefined): Promise<ApiKeyResource[]> {
    if (accountId !== undefined && !(await getAccount(this.db, accountId))) {
      throw new AppError("not_found", `Account "${accountId}" does not exist.`, { param: "account_id" });
    }
    return (await listApiKeys(this.db, accountId)).map(apiKeyResource);
  }

  /** One account's key by its prefix (404 when the account has none such, or does not exist). */
  async get(accountId: string, prefix: string): Promise<ApiKeyResource> {
    const key = (await this.list(accountId)).find((k) => k.prefix === prefix);
    if (!key) throw new AppError("not_found", `No API key has the prefix "${prefix}".`, { param: "prefix" });
    return key;
  }

  /** Revokes a key by its prefix; with `accountId`, only that account's (another's is a missing one). */
  async revoke(prefix: string, accountId?: string): Promise<ApiKeyResource> {
    const key = await revokeApiKey(this.db, { prefix }, { accountId });
    if (!key) throw new AppError("not_found", `No API key has the prefix "${prefix}".`, { param: "prefix" });
    this.changed.keyRevoked?.(key.id);
    return apiKeyResource(key);
  }

  /**
   * A new key for the caller's own account, with none of the scopes the caller lacks (so that
   * no key makes a stronger one), and expiring no later than the caller's key (by default when
   * it does), so that no key outlives the one that made it.
   */
  async issueOwn(caller: Caller, accountId: string, request: IssueApiKeyRequest): Promise<IssuedApiKey> {
    this.own(caller, accountId);
    const scopes = request.scopes ?? DEFAULT_KEY_SCOPES.filter((s) => caller.scopes.includes(s));
    const lacking = scopes.filter((s) => !caller.scopes.includes(s));
    if (lacking.length > 0) {
      throw new AppError(
        "forbidden",
        `A key can only make keys with scopes it has itself: this one lacks ${lacking.join(", ")}.`,
        { param: "scopes" },
      );
    }
    const maker = await findActiveApiKey(this.db, caller.keyId);
    if (!maker) throw new AppError("unauthorized", "The API key is no longer valid.");
    const limit = maker.expiresAt;
    const asked = request.expireTime === undefined ? undefined : new Date(request.expireTime);
    if (limit && asked && asked.getTime() > limit.getTime()) {
      throw new AppError(
        "forbidden",
        `A key cannot outlive the key that makes it: this one expires at ${limit.toISOString()}.`,
        { param: "expireTime" },
      );
    }
    return this.insert(accountId, { name: request.name, scopes, expiresAt: asked ?? limit ?? undefined });
  }

  /** The caller's own account's keys, oldest first. */
  async listOwn(caller: Caller, accountId: string): Promise<ApiKeyResource[]> {
    this.own(caller, accountId);
    return (await listApiKeys(this.db, accountId)).map(apiKeyResource);
  }

  /** One of the caller's own account's keys by its prefix; another account's is a missing one. */
  async getOwn(caller: Caller, accountId: string, prefix: string): Promise<ApiKeyResource> {
    this.own(caller, accountId);
    return this.get(accountId, prefix);
  }

  /** Revokes any key of the caller's own account (its own included: its sessions end with it). */
  async revokeOwn(caller: Caller, accountId: string, prefix: string): Promise<ApiKeyResource> {
    this.own(caller, accountId);
    return this.revoke(prefix, accountId);
  }

  /** Whether the caller may manage `accountId`'s keys: its own account, with the models scope. */
  private own(caller: Caller, accountId: string): void {
    if (accountId !== caller.accountId) throw accountNotFound(accountId);
    if (!caller.scopes.includes("models")) {
      throw new AppError(
        "forbidden",
        `Managing API keys needs a key with the models scope; this key has ${caller.scopes.join(", ")}.`,
      );
    }
  }

  private async insert(
    accountId: string,
    key: { name: string | undefined; scopes: readonly ApiKeyScope[]; expiresAt: Date | undefined },
  ): Promise<IssuedApiKey> {
    const { key: secret, apiKey } = await issueApiKey(this.db, {
      accountId,
      name: key.name ?? "default",
      scopes: key.scopes,
      ...(key.expiresAt !== undefined ? { expiresAt: key.expiresAt } : {}),
    });
    return { key: secret, apiKey: apiKeyResource(apiKey) };
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
