import fs from "node:fs/promises";
import type { CreateAccountRequest, UpdateAccountRequest } from "../api/contract/admin/resources.js";
import type { ApiKeyResource, IssueApiKeyRequest, IssuedApiKey } from "../api/contract/management/api-key-resources.js";
import type { AccountResource } from "../api/contract/management/resources.js";
import { AccountKeys } from "../api/services/account-keys.js";
import { Administration } from "../api/services/administration.js";
import { adminKeyFilePath } from "../auth/bootstrap.js";
import { HearthClient } from "../cli/api-client.js";
import { authFilePath, DEFAULT_PROFILE, readProfiles } from "../cli/config-file.js";
import { CliError, EXIT } from "../cli/exit-codes.js";
import { resolveServer, SERVER_VARIABLE } from "../cli/server-setting.js";
import { loadConfig, type Config } from "../config.js";
import { localUrl } from "../process/ready-announcement.js";
import { withAdminDatabase } from "./admin-database.js";

/**
 * Where the admin commands act: the server's admin endpoints (`/v1/admin`, with an admin key:
 * the normal way, from anywhere), or with `--database` the database itself (bootstrap and
 * recovery, when no admin key reaches a server). Both answer with the API's resources.
 */
export interface AdminBackend {
  accounts(): Promise<AccountResource[]>;
  createAccount(request: CreateAccountRequest): Promise<AccountResource>;
  updateAccount(accountId: string, request: UpdateAccountRequest): Promise<AccountResource>;
  issueKey(accountId: string, request: IssueApiKeyRequest): Promise<IssuedApiKey>;
  keys(accountId: string | undefined): Promise<ApiKeyResource[]>;
  revokeKey(prefix: string): Promise<ApiKeyResource>;
}

export interface AdminTarget {
  /** Act on the database directly. */
  database?: boolean;
  /** The server's URL (--server); else as connection() says. */
  server?: string;
}

/** Runs `work` against the chosen backend. */
export async function withAdminBackend<T>(
  target: AdminTarget,
  work: (backend: AdminBackend) => Promise<T>,
): Promise<T> {
  const config = loadConfig(process.env);
  if (target.database) {
    return withAdminDatabase((db) => work(databaseBackend(new Administration(db, config.limits), new AccountKeys(db))));
  }
  const { server, key } = await connection(target.server, process.env, config);
  return work(httpBackend(new HearthClient(server, key)));
}

/**
 * The server, found as the `hearth` CLI finds it (server-setting.ts): --server, else
 * HEARTH_BASE_URL, else the server `hearth signin` remembered, else this machine's Hearth
 * (HOST and PORT). The key: HEARTH_API_KEY; else, when the server is signin's, the key signin
 * saved with it (a remembered server elsewhere never receives this machine's admin key); else
 * the admin key a first start wrote under the data directory.
 */
async function connection(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  config: Config,
): Promise<{ server: string; key: string }> {
  const profile =
    option || env[SERVER_VARIABLE] ? undefined : (await readProfiles(authFilePath(env))).get(DEFAULT_PROFILE);
  const server = resolveServer(option, env, profile, localUrl(config));
  const key =
    env.HEARTH_API_KEY?.trim() ||
    (server.from === "profile" ? profile?.api_key : undefined) ||
    (await adminKeyFromFile(config.dataDir));
  return { server: server.url, key };
}

async function adminKeyFromFile(dataDir: string): Promise<string> {
  const file = adminKeyFilePath(dataDir);
  const fromFile = await fs.readFile(file, "utf8").then(
    (text) => text.trim(),
    () => "",
  );
  if (fromFile) return fromFile;
  throw new CliError(
    EXIT.failure,
    `No admin key: set HEARTH_API_KEY to an admin key (none in ${file} either).`,
    "Or, on the server's machine, add --database to act on the database itself.",
  );
}

function httpBackend(client: HearthClient): AdminBackend {
  return {
    accounts: async () => (await client.adminListAccounts()).accounts,
    createAccount: (request) => client.adminCreateAccount(request),
    updateAccount: (accountId, request) => client.adminUpdateAccount(accountId, request),
    issueKey: (accountId, request) => client.adminIssueKey(accountId, request),
    keys: async (accountId) => (await client.adminListKeys(accountId)).apiKeys,
    revokeKey: (prefix) => client.adminRevokeKey(prefix),
  };
}

function databaseBackend(administration: Administration, keys: AccountKeys): AdminBackend {
  return {
    accounts: () => administration.accounts(),
    createAccount: (request) => administration.createAccount(request),
    updateAccount: (accountId, request) => administration.updateAccount(accountId, request),
    issueKey: (accountId, request) => keys.issue(accountId, request),
    keys: (accountId) => keys.list(accountId),
    revokeKey: (prefix) => keys.revoke(prefix),
  };
}
