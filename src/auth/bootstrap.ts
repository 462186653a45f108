import fs from "node:fs/promises";
import path from "node:path";
import { lockForTransaction } from "../db/advisory-locks.js";
import type { Db } from "../db/client.js";
import { createAccount, ensureAccount, hasAccountsOtherThan } from "../db/queries/accounts.js";
import { apiKeyHashExists } from "../db/queries/api-keys.js";
import { BUILTIN_ACCOUNT_ID, DEFAULT_ACCOUNT_ID } from "../db/schema/accounts.js";
import { API_KEY_SCOPES } from "../domain/vocabulary.js";
import { hashApiKey, issueApiKey } from "./api-keys.js";

export const ADMIN_KEY_FILE_NAME = "admin-api-key";

export interface BootstrapOptions {
  /** HEARTH_ADMIN_KEY: the first admin key to create instead of a generated one. */
  adminKey?: string | undefined;
  dataDir: string;
  log?: (msg: string) => void;
  /**
   * Whether `log` reaches a person at a terminal. A generated key is printed only there; on
   * any other output (a log collector, a file) only where it was written is.
   */
  toTerminal?: boolean;
}

export interface BootstrapResult {
  /** The admin key created by this call (first start only). */
  createdAdminKey?: string;
}

/** Where the first generated admin key is written. */
export function adminKeyFilePath(dataDir: string): string {
  return path.join(path.resolve(dataDir), ADMIN_KEY_FILE_NAME);
}

/**
 * Brings a migrated database to its starting state; idempotent. Always ensures the
 * built-in account exists. On first start (no other account) creates the `default`
 * account and an admin key: HEARTH_ADMIN_KEY when given, else a generated key. The key
 * is written to <dataDir>/admin-api-key (mode 0600); a generated one is also printed once, to a terminal only. A transaction-scoped
 * advisory lock makes concurrent starts create one key between them.
 */
export async function bootstrapDatabase(db: Db, opts: BootstrapOptions): Promise<BootstrapResult> {
  const log = opts.log ?? (() => {});
  const keyFile = adminKeyFilePath(opts.dataDir);

  const outcome = await db.transaction(async (tx) => {
    await lockForTransaction(tx, "bootstrap");
    await ensureAccount(tx, { id: BUILTIN_ACCOUNT_ID, displayName: "Hearth" });
    if (await hasAccountsOtherThan(tx, BUILTIN_ACCOUNT_ID)) {
      const ignoredAdminKey = opts.adminKey !== undefined && !(await apiKeyHashExists(tx, hashApiKey(opts.adminKey)));
      return { created: false as const, ignoredAdminKey };
    }
    if (!(await createAccount(tx, { id: DEFAULT_ACCOUNT_ID, displayName: "Default" }))) {
      return { created: false as const, ignoredAdminKey: false };
    }
    const issued = await issueApiKey(tx, {
      accountId: DEFAULT_ACCOUNT_ID,
      name: "admin",
      scopes: API_KEY_SCOPES,
      key: opts.adminKey,
    });
    // Written before commit: if the file cannot be written, nothing is created.
    await writeSecretFile(keyFile, issued.key);
    return { created: true as const, key: issued.key };
  });

  if (!outcome.created) {
    if (outcome.ignoredAdminKey) {
      log(
        "HEARTH_ADMIN_KEY is set but the database already has accounts, so it was not added; " +
          "create keys with `npm run admin -- create-key`.",
      );
    }
    return {};
  }
  if (opts.adminKey === undefined && opts.toTerminal) {
    log(`Admin API key (shown once; also written to ${keyFile}): ${outcome.key}`);
  } else if (opts.adminKey === undefined) {
    log(`Created an admin API key, written to ${keyFile} (not printed: this output is not a terminal).`);
  } else {
    log(
      `Created account "${DEFAULT_ACCOUNT_ID}" with the admin key from HEARTH_ADMIN_KEY (also written to ${keyFile}).`,
    );
  }
  return { createdAdminKey: outcome.key };
}

/** Replaces the file with one only its owner can read. */
async function writeSecretFile(file: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.rm(file, { force: true });
  await fs.writeFile(file, `${content}\n`, { mode: 0o600, flag: "wx" });
  await fs.chmod(file, 0o600);
}
