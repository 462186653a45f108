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
      .command("set-limits")
      .description("Set an account's rate limits and quotas; 'default' puts one back to the server's")
      .argument("<id>", "the account ID")
      .option("--requests-per-minute <n>", "requests per minute over every /v1 route")
      .option("--tokens-per-minute <n>", "prompt and completion tokens per minute")
      .option("--max-in-flight <n>", "generation requests queued or running at once")
      .option("--max-models <n>", "models the account may have")
      .option("--max-stored-bytes <n>", "bytes of uploaded files it may store")
      .action(
        adminAction(
          async ({ admin, out }, id: string, options: LimitOptions) => {
            const account = await admin.updateAccount(id, { limits: parseLimits(options) });
            out.result(account, () => [
              `Limits of account "${account.accountId}" as they now apply:`,
              ...Object.entries(account.limits).map(([name, value]) => `  ${name}: ${value ?? "no limit"}`),
            ]);
          },
          (_id: string, options: LimitOptions) => void parseLimits(options),
        ),
      ),
    [
      "npm run admin -- set-limits acme --requests-per-minute 120 --tokens-per-minute 200000",
      "npm run admin -- set-limits acme --max-in-flight default",
    ],
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

interface LimitOptions {
  requestsPerMinute?: string;
  tokensPerMinute?: string;
  maxInFlight?: string;
  maxModels?: string;
  maxStoredBytes?: string;
}

const LIMIT_OPTIONS = {
  requestsPerMinute: ["--requests-per-minute", "requestsPerMinute"],
  tokensPerMinute: ["--tokens-per-minute", "tokensPerMinute"],
  maxInFlight: ["--max-in-flight", "maxInFlightRequests"],
  maxModels: ["--max-models", "maxModels"],
  maxStoredBytes: ["--max-stored-bytes", "maxStoredBytes"],
} as const;

/** The options given, as the admin endpoint takes them: a positive whole number, or null for "default". */
function parseLimits(options: LimitOptions): Record<string, number | null> {
  const limits: Record<string, number | null> = {};
  for (const [option, [flag, field]] of Object.entries(LIMIT_OPTIONS)) {
    const value = options[option as keyof LimitOptions];
    if (value === undefined) continue;
    if (value === "default") limits[field] = null;
    else if (/^[1-9]\d{0,15}$/.test(value)) limits[field] = Number(value);
    else throw usageError(`Invalid ${flag} "${value}": use a whole number above 0, or default.`);
  }
  if (Object.keys(limits).length === 0)
    throw usageError("Give at least one limit to set, e.g. --requests-per-minute 120.");
  return limits;
}
