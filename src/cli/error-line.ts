import { CommanderError } from "commander";
import { CliError, EXIT, type ExitCode } from "./exit-codes.js";

/**
 * The one stderr line of the errors every commander program here shares (the `hearth` CLI
 * and `npm run admin`): commander's usage errors and a command's own CliError. Errors of a
 * program's own (the CLI's HTTP errors, the admin tool's database errors) stay with it.
 */
export function describeCommandError(error: unknown, command: string): { code: ExitCode; message: string } | undefined {
  if (error instanceof CommanderError) {
    // --help and --cli-version (0); a verb without its noun shows its help (a usage error).
    if (["commander.help", "commander.helpDisplayed", "commander.version"].includes(error.code)) {
      return { code: error.exitCode === 0 ? EXIT.ok : EXIT.usage, message: "" };
    }
    const text = error.message.replace(/^error: /, "").replace(/\.$/, "");
    return {
      code: EXIT.usage,
      message: `${text.charAt(0).toUpperCase()}${text.slice(1)}. Run \`${command} --help\` for usage.`,
    };
  }
  if (error instanceof CliError) return { code: error.exitCode, message: withHint(error.message, error.hint) };
  return undefined;
}

/** A message as a sentence, then what to do next. */
export function withHint(message: string, hint: string | undefined): string {
  const sentence = /[.!?]$/.test(message.trim()) ? message.trim() : `${message.trim()}.`;
  return hint ? `${sentence} ${hint}` : sentence;
}
