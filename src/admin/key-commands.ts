import type { Command } from "commander";
import { examples } from "../cli/command-kit.js";
import { usageError } from "../cli/exit-codes.js";
import { table } from "../cli/output.js";
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
      .option("--role <role>", `${API_KEY_ROLES.join(" or ")} (default: member)`)
      .action(
        adminAction(
          async ({ admin, out }, accountId: string, options: { name?: string; role?: string }) => {
            const { key, apiKey } = await admin.issueKey(accountId, {
              name: options.name,
              role: options.role as ApiKeyRole | undefined,
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
        adminAction(async ({ admin, out }, accountId: string | undefined) => {
          const keys = await admin.keys(accountId);
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
                    adminTime(k.createTime),
                    adminTime(k.lastUseTime),
                    adminTime(k.revokeTime),
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
        adminAction(async ({ admin, out }, prefix: string) => {
          const key = await admin.revokeKey(prefix);
          out.result(
            key,
            () =>
              `Revoked key ${key.prefix} ("${key.name}", account "${key.accountId}") at ${adminTime(key.revokeTime)}.`,
          );
        }),
      ),
    ["npm run admin -- revoke-key hth_AbCdEfGh"],
  );
}
