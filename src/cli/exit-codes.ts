/**
 * The CLI's exit codes, and the error a command throws to end with one of them. Every
 * error is printed on one line of stderr that says what to do next.
 */

export const EXIT = {
  ok: 0,
  /** The server refused or failed (a 4xx other than 401/404, a 5xx, or no answer). */
  failure: 1,
  /** Bad arguments, or local files that fail the checks; nothing was sent. */
  usage: 2,
  /** No API key, or the server refused the key. */
  notSignedIn: 3,
  notFound: 4,
  /** Interrupted with Ctrl-C (128 + SIGINT). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** What to do next, appended to the message. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export const usageError = (message: string, hint?: string) => new CliError(EXIT.usage, message, hint);
