/**
 * Operator commands that work on the database directly (accounts and API keys):
 *   npm run admin -- <command> [options]
 * Exit status: 0 done, 1 failed, 2 usage error.
 */
import { parseArgs } from "node:util";
import { issueApiKey } from "../src/auth/api-keys.js";
import { loadConfig } from "../src/config.js";
import { bootstrapDatabase } from "../src/auth/bootstrap.js";
import { openDatabase, type Db } from "../src/db/client.js";
import { migrateDatabase } from "../src/db/migrate.js";
import { createAccount, getAccount, listAccounts } from "../src/db/queries/accounts.js";
import { listApiKeys, revokeApiKey } from "../src/db/queries/api-keys.js";
import { ACCOUNT_ID_PATTERN } from "../src/db/schema/accounts.js";
import { API_KEY_ROLES, type ApiKeyRole } from "../src/db/schema/api-keys.js";

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-account <id> [--display-name NAME] [--enterprise] [--max-deployed N]
  create-key <account-id> [--name NAME] [--role admin|user]   prints the key once
  list-accounts
  list-keys [<account-id>]
  revoke-key <prefix>

Options:
  --output text|json   output format (default text)
  -h, --help           show this help

The database is the one the server uses: DATABASE_URL, else PGlite under HEARTH_DATA_DIR
(one process at a time: stop the server before running these against PGlite).`;

class UsageError extends Error {}
/** A failure worth one line to the operator (exit status 1). */
class CommandError extends Error {}

type Values = {
  "display-name"?: string;
  enterprise?: boolean;
  "max-deployed"?: string;
  name?: string;
  role?: string;
  output?: string;
  help?: boolean;
};

interface Context {
  db: Db;
  json: boolean;
  args: string[];
  values: Values;
}

interface Command {
  arity: [min: number, max: number];
  /** Checks arguments before the database is opened; throws UsageError. */
  check?: (args: string[], values: Values) => void;
  run: (ctx: Context) => Promise<void>;
}

const commands: Record<string, Command> = {
  "create-account": {
    arity: [1, 1],
    check(args, values) {
      if (!ACCOUNT_ID_PATTERN.test(args[0]!)) {
        throw new UsageError(
          `Invalid account ID "${args[0]}": use 1–63 lowercase letters, digits and hyphens, starting with a letter or digit.`,
        );
      }
      if (values["max-deployed"] !== undefined) parseCount(values["max-deployed"]);
    },
    async run({ db, json, args, values }) {
      const id = args[0]!;
      const maxDeployed = values["max-deployed"] === undefined ? undefined : parseCount(values["max-deployed"]);
      const account = await createAccount(db, {
        id,
        displayName: values["display-name"] ?? id,
        enterprise: values.enterprise ?? false,
        maxDeployedModels: maxDeployed,
      });
      if (!account) throw new CommandError(`Account "${id}" already exists.`);
      print(json, account, () => `Created account "${account.id}" (${account.displayName}).`);
    },
  },
  "create-key": {
    arity: [1, 1],
    check(_args, values) {
      if (values.role !== undefined && !(API_KEY_ROLES as readonly string[]).includes(values.role)) {
        throw new UsageError(`Invalid --role "${values.role}": use ${API_KEY_ROLES.join(" or ")}.`);
      }
    },
    async run({ db, json, args, values }) {
      const role = values.role ?? "user";
      const { key, apiKey } = await issueApiKey(db, {
        accountId: args[0]!,
        name: values.name ?? "default",
        role: role as ApiKeyRole,
      });
      print(json, { key, ...apiKey }, () =>
        [
          `Created ${apiKey.role} key "${apiKey.name}" (prefix ${apiKey.prefix}) for account "${apiKey.accountId}".`,
          "It is shown once; store it now:",
          key,
        ].join("\n"),
      );
    },
  },
  "list-accounts": {
    arity: [0, 0],
    async run({ db, json }) {
      const accounts = await listAccounts(db);
      print(json, accounts, () =>
        table(
          ["ID", "DISPLAY NAME", "ENTERPRISE", "MAX DEPLOYED", "CREATED"],
          accounts.map((a) => [
            a.id,
            a.displayName,
            a.enterprise ? "yes" : "no",
            String(a.maxDeployedModels),
            time(a.createdAt),
          ]),
        ),
      );
    },
  },
  "list-keys": {
    arity: [0, 1],
    async run({ db, json, args }) {
      const accountId = args[0];
      if (accountId !== undefined && !(await getAccount(db, accountId))) {
        throw new CommandError(`Account "${accountId}" does not exist.`);
      }
      const keys = await listApiKeys(db, accountId);
      print(json, keys, () =>
        table(
          ["PREFIX", "ACCOUNT", "NAME", "ROLE", "CREATED", "LAST USED", "REVOKED"],
          keys.map((k) => [
            k.prefix,
            k.accountId,
            k.name,
            k.role,
            time(k.createdAt),
            time(k.lastUsedAt),
            time(k.revokedAt),
          ]),
        ),
      );
    },
  },
  "revoke-key": {
    arity: [1, 1],
    async run({ db, json, args }) {
      const key = await revokeApiKey(db, { prefix: args[0]! });
      if (!key) throw new CommandError(`No API key with prefix "${args[0]}".`);
      print(
        json,
        key,
        () => `Revoked key ${key.prefix} ("${key.name}", account "${key.accountId}") at ${time(key.revokedAt)}.`,
      );
    },
  },
};

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { command, args, values, json } = parsed;

  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    const config = loadConfig(process.env);
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 2 });
    await migrateDatabase(database);
    await bootstrapDatabase(database.db, {
      adminKey: config.adminKey,
      dataDir: config.dataDir,
      log: (msg) => process.stderr.write(`${msg}\n`),
    });
    await command.run({ db: database.db, json, args, values });
    return 0;
  } catch (err) {
    process.stderr.write(`Error: ${describeError(err)}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "display-name": { type: "string" },
      enterprise: { type: "boolean" },
      "max-deployed": { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      output: { type: "string", default: "text" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  const [name, ...args] = positionals;
  if (name === undefined) throw new UsageError("No command given.");
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) throw new UsageError(`Unknown command "${name}".`);
  const [min, max] = command.arity;
  if (args.length < min || args.length > max) {
    throw new UsageError(
      `${name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? "" : "s"}, got ${args.length}.`,
    );
  }
  if (values.output !== "text" && values.output !== "json") {
    throw new UsageError(`Invalid --output "${values.output}": use text or json.`);
  }
  command.check?.(args, values);
  return { command, args, values: values as Values, json: values.output === "json" };
}

/** The message and those of its causes (drizzle wraps driver errors in "Failed query: ..."). */
function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && parts.length < 5; e = e instanceof Error ? e.cause : undefined) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join("\n  caused by: ");
}

function parseCount(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`Invalid --max-deployed "${value}": use a whole number.`);
  return Number(value);
}

function print(json: boolean, data: unknown, text: () => string): void {
  process.stdout.write(`${json ? JSON.stringify(data, null, 2) : text()}\n`);
}

function time(value: Date | null): string {
  return value === null ? "-" : value.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return "(none)";
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

process.exitCode = await main(process.argv.slice(2));
