import { Command, CommanderError } from "commander";
import { CliError, EXIT } from "../cli/exit-codes.js";
import { HearthApiError, HearthConnectionError } from "../cli/api-client.js";
import { describeCommandError, withHint } from "../cli/error-line.js";
import { Output, outputOption } from "../cli/output.js";
import { registerAccountCommands } from "./account-commands.js";
import { registerKeyCommands } from "./key-commands.js";

/**
 * `npm run admin`: the operator's commands for accounts and API keys. They use the server's
 * admin endpoints with an admin key; `--database` acts on the database itself instead, for
 * bootstrap and recovery. Same output, tables and exit codes as the `hearth` CLI: 0 done,
 * 1 failed, 2 usage error (nothing was reached).
 */

const NAME = "npm run admin --";
const USAGE = `Usage: ${NAME} <command> [options]  (${NAME} --help lists the commands)`;

export function buildAdminProgram(): Command {
  const program = new Command(NAME)
    .description("Manage Hearth's accounts and API keys (through the server's admin endpoints).")
    .addOption(outputOption())
    .option(
      "--server <url>",
      "the server (default: HEARTH_BASE_URL, else the one `hearth signin` remembered, else this machine's HOST and PORT)",
    )
    .option("--database", "act on the database itself, not through a server (bootstrap and recovery)")
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  program.addHelpText(
    "after",
    [
      "",
      "The key: HEARTH_API_KEY (an admin key); else, when the server is the one `hearth signin`",
      "remembered, the key saved with it; else the one a first start wrote to",
      "HEARTH_DATA_DIR/admin-api-key. With --database: DATABASE_URL, else PGlite under",
      "HEARTH_DATA_DIR (one process at a time: stop the server first).",
      "Exit codes: 0 done, 1 failed, 2 usage error.",
      "",
    ].join("\n"),
  );
  registerAccountCommands(program);
  registerKeyCommands(program);
  for (const command of program.commands) command.exitOverride().configureOutput({ outputError: () => {} });
  return program;
}

/** Runs the admin tool; returns the exit code. */
export async function runAdmin(argv: string[]): Promise<number> {
  const out = new Output({ format: "text", quiet: false, color: true });
  const program = buildAdminProgram();
  try {
    if (argv.length === 0) throw new CliError(EXIT.usage, "No command given.");
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (error) {
    const named = program.commands.find((c) => c.name() === argv[0]);
    const { code, message } = describeAdminError(error, named ? `${NAME} ${named.name()}` : NAME);
    if (message) out.error(message);
    if (code === EXIT.usage) process.stderr.write(`${USAGE}\n`);
    return code;
  }
}

function describeAdminError(error: unknown, command: string): { code: number; message: string } {
  if (error instanceof CommanderError && error.code === "commander.unknownCommand") {
    const name = /'([^']+)'/.exec(error.message)?.[1] ?? "";
    return { code: EXIT.usage, message: `Unknown command "${name}".` };
  }
  const common = describeCommandError(error, command);
  if (common) return common;
  if (error instanceof HearthApiError) {
    const refused = error.status === 401 || error.status === 403;
    const hint = refused ? "Set HEARTH_API_KEY to an admin key, or add --database on the server's machine." : undefined;
    return { code: EXIT.failure, message: withHint(error.message, hint) };
  }
  if (error instanceof HearthConnectionError) {
    return {
      code: EXIT.failure,
      message: withHint(
        error.message,
        "Is it running? Pass --server or set HEARTH_BASE_URL; or add --database on the server's machine.",
      ),
    };
  }
  // The database's own words, with their causes (drizzle wraps the driver's errors).
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 5; e = e instanceof Error ? e.cause : undefined) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return { code: EXIT.failure, message: parts.join(" (caused by: ").concat(")".repeat(parts.length - 1)) };
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await runAdmin(process.argv.slice(2));
