import type { Command } from "commander";
import { createContext, type CliContext } from "./context.js";

/** What command groups register on: the program and its verbs (`hearth list …`, `hearth create …`). */
export interface Verbs {
  program: Command;
  list: Command;
  create: Command;
  get: Command;
  update: Command;
  delete: Command;
  revoke: Command;
  cancel: Command;
}

/**
 * A commander action that resolves the global options into a CliContext first. The
 * action receives the context, then commander's arguments (positionals, then options).
 */
export function withContext<A extends unknown[]>(run: (ctx: CliContext, ...args: A) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const ctx = await createContext(command);
    await run(ctx, ...(args.slice(0, -1) as A));
  };
}

/** Adds an Examples section to a command's --help. */
export function examples(command: Command, lines: string[]): Command {
  return command.addHelpText("after", `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`);
}

/** A signal that Ctrl-C aborts, in place of ending the process, until `release()`. */
export function interruptSignal(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once("SIGINT", abort);
  return { signal: controller.signal, release: () => process.off("SIGINT", abort) };
}
