import type { Command } from "commander";
import { issueApiKey } from "../auth/api-keys.js";
import { examples } from "../cli/command-kit.js";
import { CliError, EXIT, usageError } from "../cli/exit-codes.js";
import { table } from "../cli/output.js";
import { getAccount } from "../db/queries/accounts.js";
import { listApiKeys, revokeApiKey } from "../db/queries/api-keys.js";
import { API_KEY_ROLES, type ApiKeyRole } from "../domain/vocabulary.js";
import { adminAction, adminTime } from "./admin-action.js";

/** create-key, list-keys and revoke-key. */
export function registerKeyCommands(program: Command): void {
  examples(
    program
      .command("create-key")
      .description("Create an API key for an account; the key is printed once")
      .argument("<account-id>", "the account the key belongs to")
      .option("--name <name>", "what the key is for (default: default)")
      .option("--role <role>", `${API_KEY_ROLES.join(" or ")} (default: user)`)
      .action(
        adminAction(
          async ({ db, out }, accountId: string, options: { name?: string; role?: string }) => {
            const { key, apiKey } = await issueApiKey(db, {
              accountId,
              name: options.name ?? "default",
              role: (options.role ?? "user") as ApiKeyRole,
            });
            out.result({ key, ...apiKey }, () => [
              `Created ${apiKey.role} key "${apiKey.name}" (prefix ${apiKey.prefix}) for account "${apiKey.accountId}".`,
              "It is shown once; store it now:",
              key,
            ]);
          },
          (_accountId: string, options: { role?: string }) => {
            if (options.role !== undefined && !(API_KEY_ROLES as readonly string[]).includes(options.role)) {
              throw usageError(`Invalid --role "${options.role}": use ${API_KEY_ROLES.join(" or ")}.`);
            }
          },
        ),
      ),
    ["npm run admin -- create-key acme --name ci", "npm run admin -- create-key acme --role admin --output json"],
  );

  examples(
    program
      .command("list-keys")
      .description("List API keys (prefix, account, role, use); never the keys themselves")
      .argument("[account-id]", "only this account's keys")
      .action(
        adminAction(async ({ db, out }, accountId: string | undefined) => {
          if (accountId !== undefined && !(await getAccount(db, accountId))) {
            throw new CliError(EXIT.failure, `Account "${accountId}" does not exist.`);
          }
          const keys = await listApiKeys(db, accountId);
          out.result(keys, () =>
            keys.length === 0
              ? "(none)"
              : table(
                  out,
                  ["PREFIX", "ACCOUNT", "NAME", "ROLE", "CREATED", "LAST USED", "REVOKED"],
                  keys.map((k) => [
                    k.prefix,
                    k.accountId,
                    k.name,
                    k.role,
                    adminTime(k.createdAt),
                    adminTime(k.lastUsedAt),
                    adminTime(k.revokedAt),
                  ]),
                ),
          );
        }),
      ),
    ["npm run admin -- list-keys", "npm run admin -- list-keys acme --output json"],
  );

  examples(
    program
      .command("revoke-key")
      .description("Revoke an API key by its prefix (as list-keys shows it)")
      .argument("<prefix>", "the key's first 12 characters, e.g. hth_AbCdEfGh")
      .action(
        adminAction(async ({ db, out }, prefix: string) => {
          const key = await revokeApiKey(db, { prefix });
          if (!key) throw new CliError(EXIT.failure, `No API key with prefix "${prefix}".`);
          out.result(
            key,
            () =>
              `Revoked key ${key.prefix} ("${key.name}", account "${key.accountId}") at ${adminTime(key.revokedAt)}.`,
          );
        }),
      ),
    ["npm run admin -- revoke-key hth_AbCdEfGh"],
  );
}
