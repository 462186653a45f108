import type { Command } from "commander";
import { examples } from "../cli/command-kit.js";
import {
  issueKeyRequest,
  issuedKeyLines,
  keyTable,
  revokedKeyLine,
  withKeyOptions,
  type KeyOptions,
} from "../cli/key-view.js";
import { adminAction } from "./admin-action.js";

interface CreateKeyOptions extends KeyOptions {
  name?: string;
}

/** create-key, list-keys and revoke-key. */
export function registerKeyCommands(program: Command): void {
  examples(
    withKeyOptions(
      program
        .command("create-key")
        .description("Create an API key for an account; the key is printed once")
        .argument("<account-id>", "the account the key belongs to")
        .option("--name <name>", "what the key is for (default: default)"),
    ).action(
      adminAction(
        async ({ admin, out }, accountId: string, options: CreateKeyOptions) => {
          const issued = await admin.issueKey(accountId, issueKeyRequest(options.name, options));
          out.result({ key: issued.key, ...issued.apiKey }, () => issuedKeyLines(issued));
        },
        (_accountId: string, options: CreateKeyOptions) => void issueKeyRequest(options.name, options),
      ),
    ),
    [
      "npm run admin -- create-key acme --name ci --scopes inference --expires 90d",
      "npm run admin -- create-key acme --scopes inference,models,admin --output json",
    ],
  );

  examples(
    program
      .command("list-keys")
      .description("List API keys (prefix, account, scopes, use, expiry); never the keys themselves")
      .argument("[account-id]", "only this account's keys")
      .action(
        adminAction(async ({ admin, out }, accountId: string | undefined) => {
          const keys = await admin.keys(accountId);
          out.result(keys, () => keyTable(out, keys));
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
          out.result(key, () => revokedKeyLine(key));
        }),
      ),
    ["npm run admin -- revoke-key hth_AbCdEfGh"],
  );
}
