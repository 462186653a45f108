import type { Command } from "commander";
import { examples } from "../cli/command-kit.js";
import { usageError } from "../cli/exit-codes.js";
import { accountTable } from "../cli/account-view.js";
import { ACCOUNT_ID_PATTERN } from "../domain/vocabulary.js";
import { adminAction } from "./admin-action.js";

/** create-account and list-accounts. */
export function registerAccountCommands(program: Command): void {
  examples(
    program
      .command("create-account")
      .description("Create an account")
      .argument("<id>", "the account ID: 1–63 lowercase letters, digits and hyphens")
      .option("--display-name <name>", "the account's display name (default: its ID)")
      .option("--enterprise", "no limit on deployed models")
      .option("--max-deployed <n>", "how many models it may deploy at once (default 100)")
      .action(
        adminAction(async ({ admin, out }, id: string, options: CreateAccountOptions) => {
          const maxDeployed = options.maxDeployed === undefined ? undefined : parseCount(options.maxDeployed);
          const account = await admin.createAccount({
            accountId: id,
            displayName: options.displayName,
            enterprise: options.enterprise ?? false,
            maxDeployedModels: maxDeployed,
          });
          out.result(account, () => `Created account "${account.accountId}" (${account.displayName}).`);
        }, checkCreateAccount),
      ),
    ['npm run admin -- create-account acme --display-name "Acme"', "npm run admin -- create-account big --enterprise"],
  );

  examples(
    program
      .command("list-accounts")
      .description("List the accounts")
      .action(
        adminAction(async ({ admin, out }) => {
          const accounts = await admin.accounts();
          out.result(accounts, () => (accounts.length === 0 ? "(none)" : accountTable(out, accounts)));
        }),
      ),
    ["npm run admin -- list-accounts --output json"],
  );
}

interface CreateAccountOptions {
  displayName?: string;
  enterprise?: boolean;
  maxDeployed?: string;
}

/** Checked before the database is opened: a usage error costs no connection. */
function checkCreateAccount(id: string, options: CreateAccountOptions): void {
  if (!ACCOUNT_ID_PATTERN.test(id)) {
    throw usageError(
      `Invalid account ID "${id}": use 1–63 lowercase letters, digits and hyphens, starting with a letter or digit.`,
    );
  }
  if (options.maxDeployed !== undefined) parseCount(options.maxDeployed);
}

function parseCount(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw usageError(`Invalid --max-deployed "${value}": use a whole number.`);
  return Number(value);
}
