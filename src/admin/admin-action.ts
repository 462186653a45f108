import type { Command } from "commander";
import { Output, type OutputFormat } from "../cli/output.js";
import { withAdminBackend, type AdminBackend } from "./admin-backend.js";

export interface AdminContext {
  admin: AdminBackend;
  out: Output;
}

interface GlobalOptions {
  output: OutputFormat;
  server?: string;
  database?: boolean;
}

/**
 * A commander action of the admin tool: `check` sees the arguments first (usage errors
 * cost no connection), then the server (or with --database the database) is reached for
 * `run`. Arguments come as commander passes them: positionals, then the options.
 */
export function adminAction<A extends unknown[]>(
  run: (ctx: AdminContext, ...args: A) => Promise<void>,
  check?: (...args: A) => void,
) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const positionals = args.slice(0, -1) as A;
    check?.(...positionals);
    const { output, server, database } = command.optsWithGlobals<GlobalOptions>();
    const out = new Output({ format: output, quiet: false, color: true });
    await withAdminBackend({ server, database }, (admin) => run({ admin, out }, ...positionals));
  };
}
