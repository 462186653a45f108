import type { Command } from "commander";
import { Output, type OutputFormat } from "../cli/output.js";
import type { Db } from "../db/client.js";
import { withAdminDatabase } from "./admin-database.js";

export interface AdminContext {
  db: Db;
  out: Output;
}

/**
 * A commander action of the admin tool: `check` sees the arguments first (usage errors
 * cost no database connection), then the database is opened for `run`. Arguments come
 * as commander passes them: positionals, then the options.
 */
export function adminAction<A extends unknown[]>(
  run: (ctx: AdminContext, ...args: A) => Promise<void>,
  check?: (...args: A) => void,
) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const positionals = args.slice(0, -1) as A;
    check?.(...positionals);
    const { output } = command.optsWithGlobals<{ output: OutputFormat }>();
    const out = new Output({ format: output, quiet: false, color: true });
    await withAdminDatabase((db) => run({ db, out }, ...positionals));
  };
}

/** 2026-01-02T03:04:05.000Z → 2026-01-02T03:04:05Z; "-" for none. */
export function adminTime(value: Date | null): string {
  return value === null ? "-" : value.toISOString().replace(/\.\d{3}Z$/, "Z");
}
