import readline from "node:readline";
import { Writable } from "node:stream";
import { CliError, EXIT } from "./exit-codes.js";

/** Questions on a terminal (asked on stderr, so stdout stays the result), and reading piped input. */

export const isInteractive = () => process.stdin.isTTY === true;

/** Asks one question; `hidden` echoes nothing (for API keys). An empty answer gives `defaultValue`. */
export async function ask(
  question: string,
  options: { hidden?: boolean; defaultValue?: string } = {},
): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, encoding, done) {
      if (!muted) process.stderr.write(chunk, encoding);
      done();
    },
  });
  const rl = readline.createInterface({ input: process.stdin, output, terminal: true });
  const shown = options.defaultValue ? `${question} [${options.defaultValue}]: ` : `${question}: `;
  try {
    const answer = new Promise<string>((resolve, reject) => {
      rl.question(shown, resolve);
      rl.once("close", () => reject(new CliError(EXIT.usage, "The input ended before an answer was given.")));
      rl.once("SIGINT", () => reject(new CliError(EXIT.interrupted, "Interrupted; nothing was changed.")));
    });
    muted = options.hidden === true;
    const value = (await answer).trim();
    return value || options.defaultValue || "";
  } finally {
    muted = false;
    if (options.hidden) process.stderr.write("\n");
    rl.close();
  }
}

/** All of stdin (when it is a pipe or a file). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
