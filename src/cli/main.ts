import { Command } from "commander";
import { HEARTH_VERSION } from "../package-info.js";
import { HearthApiError, HearthConnectionError } from "./api-client.js";
import type { Verbs } from "./command-kit.js";
import { registerAuthCommands } from "./commands/auth.js";
import { registerBatchCommands } from "./commands/batches.js";
import { registerDeploymentCommands } from "./commands/deployments.js";
import { registerFileCommands } from "./commands/files.js";
import { registerKeyCommands } from "./commands/keys.js";
import { registerUsageCommands } from "./commands/usage.js";
import { registerModelCommands } from "./commands/models.js";
import { registerUpgradeCommand } from "./commands/upgrade.js";
import { registerVersionCommand } from "./commands/version.js";
import { describeCommandError, withHint } from "./error-line.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { Output, outputOption } from "./output.js";

/**
 * The `hearth` command (bin/hearth.js runs it): a client of a Hearth server's management,
 * files and batches APIs. Exit codes: 0 success, 1 server-side failure, 2 usage error, 3 not signed in,
 * 4 not found, 130 interrupted.
 */

export function buildProgram(): Command {
  const program = new Command("hearth")
    .description(
      "Manage LoRA adapters on a Hearth server: sign in, upload, deploy, undeploy, delete; run files of requests as batches.",
    )
    .version(HEARTH_VERSION, "-V, --cli-version", "print the CLI's version alone")
    .option(
      "--server <url>",
      "the Hearth server (default: HEARTH_BASE_URL, else the one signin remembered, else http://127.0.0.1:8080)",
    )
    .option("--api-key <key>", "the API key (default: HEARTH_API_KEY, SERVICE_API_KEY, or the profile's)")
    .option("--account-id <id>", "the account to work in (default: the key's account)")
    .option("--profile <name>", "the section of auth.ini to use (default: default)")
    .addOption(outputOption())
    .option("-q, --quiet", "print only the essentials (e.g. the model's name)")
    .option("--no-color", "no ANSI colors (also: NO_COLOR)")
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  program.addHelpText(
    "after",
    [
      "",
      "Environment: HEARTH_API_KEY (or SERVICE_API_KEY), HEARTH_BASE_URL, HEARTH_CONFIG_DIR, HEARTH_UPDATE_SOURCE, NO_COLOR.",
      "Exit codes: 0 success, 1 the server refused or failed, 2 usage error, 3 not signed in, 4 not found, 130 interrupted.",
      "",
      "Examples:",
      "  $ hearth signin",
      "  $ hearth create model my-lora data/models/examples/hearth-tiny-lora",
      "  $ hearth deploy my-lora --wait",
      "  $ hearth list models",
      "  $ hearth create batch prompts.jsonl --endpoint /v1/chat/completions --wait",
      "",
    ].join("\n"),
  );
  const verb = (name: string, description: string) => program.command(name).description(description);
  const verbs: Verbs = {
    program,
    list: verb("list", "List accounts, models, API keys, batches or files"),
    create: verb("create", "Create a model from a local folder, an API key, or a batch from a file of requests"),
    get: verb("get", "Show a model, a batch or the account's usage; download a file"),
    update: verb("update", "Change a model's display name or description"),
    delete: verb("delete", "Delete a model or a file"),
    revoke: verb("revoke", "Revoke an API key"),
    cancel: verb("cancel", "Cancel a batch"),
  };
  registerAuthCommands(verbs);
  registerModelCommands(verbs);
  registerDeploymentCommands(verbs);
  registerKeyCommands(verbs);
  registerBatchCommands(verbs);
  registerFileCommands(verbs);
  registerUsageCommands(verbs);
  registerVersionCommand(verbs);
  registerUpgradeCommand(verbs);
  return program;
}

/** Runs the CLI; returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  // `hearth list models | head -1`: a reader that stops early is no error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT.ok);
    throw error;
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    const { code, message } = describeError(error, commandPath(program, argv.slice(2)));
    if (message) errorOutput(program).error(message);
    return code;
  }
}

function errorOutput(program: Command): Output {
  const options = program.opts<{ color?: boolean }>();
  return new Output({ format: "text", quiet: false, color: options.color !== false });
}

/** An exit code and the one line that says what went wrong and what to do next. */
export function describeError(error: unknown, command = "hearth"): { code: ExitCode; message: string } {
  const common = describeCommandError(error, command);
  if (common) return common;
  if (error instanceof HearthApiError) {
    if (error.status === 401) {
      return {
        code: EXIT.notSignedIn,
        message: withHint(
          `The server refused the API key: ${error.message}`,
          "Run `hearth signin` again, or check --api-key / HEARTH_API_KEY.",
        ),
      };
    }
    if (error.status === 404) return { code: EXIT.notFound, message: withHint(error.message, notFoundHint(error)) };
    return { code: EXIT.failure, message: withHint(error.message, serverHint(error)) };
  }
  if (error instanceof HearthConnectionError) {
    return {
      code: EXIT.failure,
      message: withHint(
        error.message,
        "Is it running? Pass --server, set HEARTH_BASE_URL, or run `hearth signin` to choose the server.",
      ),
    };
  }
  const errno = error as NodeJS.ErrnoException;
  if (errno instanceof Error && typeof errno.code === "string" && errno.path !== undefined) {
    return { code: EXIT.failure, message: withHint(errno.message, "Check the path and its permissions.") };
  }
  const text = error instanceof Error ? error.message : String(error);
  return {
    code: EXIT.failure,
    message: withHint(`Unexpected error: ${text}`, "Please report it with the command you ran."),
  };
}

function notFoundHint(error: HearthApiError): string {
  if (error.param === "batch_id") return "See the batches with `hearth list batches`.";
  if (error.param === "file_id" || error.param === "input_file_id") return "See the files with `hearth list files`.";
  return /account/i.test(error.message) && !/models\//.test(error.message)
    ? "See your accounts with `hearth list accounts`."
    : "See the models with `hearth list models`.";
}

function serverHint(error: HearthApiError): string {
  if (error.code === "quota_exceeded") return "Undeploy a model first (`hearth list models` shows what is deployed).";
  // The batches' conflicts (a file a running batch reads) say what to do themselves.
  if (error.status === 409 && error.param === "file_id") return "";
  if (error.status === 409) return "See the model's state with `hearth get model <model_id>`.";
  if (error.status === 429 || error.status >= 500)
    return "Retry shortly; if it persists, check the server (GET /readyz).";
  return error.param ? `Check ${error.param}.` : "";
}

/** The command the arguments name, e.g. `hearth create model`, for pointing at its --help. */
function commandPath(program: Command, args: string[]): string {
  const names = [program.name()];
  let command = program;
  for (const arg of args) {
    const sub = command.commands.find((c) => c.name() === arg);
    if (!sub) continue;
    names.push(sub.name());
    command = sub;
  }
  return names.join(" ");
}
