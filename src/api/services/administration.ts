import type { Db } from "../../db/client.js";
import { createAccount, listAccounts, updateAccount } from "../../db/queries/accounts.js";
import type { Account } from "../../db/schema/accounts.js";
import { AppError } from "../../errors.js";
import type { LimitDefaults } from "../../limits/effective-limits.js";
import type { CreateAccountRequest, UpdateAccountRequest } from "../contract/admin/resources.js";
import type { AccountResource } from "../contract/management/resources.js";
import { accountResource } from "./resources.js";

/** Accounts and their limits, for the operators (API keys: account-keys.ts). */
export class Administration {
  constructor(
    private readonly db: Db,
    /** The limits an account has unless an admin sets others (config.limits). */
    private readonly defaults: LimitDefaults,
    /** This process's caches, told of each change so that it applies here at once. */
    private readonly changed: { accountChanged?(accountId: string): void } = {},
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
}
