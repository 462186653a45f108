import fs from "node:fs/promises";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { Sql } from "postgres";
import { scrub } from "../logger.js";
import { withQueryTimeout } from "./query-timeout.js";
import * as schema from "./schema/index.js";

/**
 * The one drizzle type every query function takes. Both the postgres-js and the
 * PGlite drivers produce a `PgDatabase` over this schema, and so does a transaction.
 */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

interface DatabaseBase {
  readonly db: Db;
  /** Which database this is, for people: the URL without its password, or PGlite's directory. */
  readonly where: string;
  close(): Promise<void>;
}

/** An open database. `client` is the driver's own handle, for the few places that need it. */
export type Database =
  | (DatabaseBase & { readonly kind: "postgres"; readonly client: Sql })
  | (DatabaseBase & { readonly kind: "pglite"; readonly client: PGlite });

export type OpenDatabaseOptions =
  | { databaseUrl?: string | undefined; dataDir: string; maxConnections?: number; timeouts?: DatabaseTimeouts }
  | { pglite: "memory" };

/** PostgreSQL's timeouts (config.ts `dbTimeouts`); PGlite, in process, needs none. */
export interface DatabaseTimeouts {
  connectMs: number;
  statementMs: number;
}

/** Connections a postgres-js pool opens at most. */
export const DEFAULT_MAX_CONNECTIONS = 10;
const DEFAULT_TIMEOUTS: DatabaseTimeouts = { connectMs: 5_000, statementMs: 15_000 };

/**
 * Opens PostgreSQL when a URL is given, else an embedded PGlite database kept under
 * `<dataDir>/db` (or in memory). Opening applies no migrations: call `migrateDatabase`.
 * A PGlite directory belongs to one process at a time.
 */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if ("pglite" in opts) return openPglite(undefined);
  if (opts.databaseUrl) {
    // Two at least: migrateDatabase holds one for its lock while the migrator uses another.
    const max = Math.max(2, opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    return openPostgres(opts.databaseUrl, max, opts.timeouts ?? DEFAULT_TIMEOUTS);
  }
  const dir = path.join(path.resolve(opts.dataDir), "db");
  await fs.mkdir(dir, { recursive: true });
  return openPglite(dir);
}

async function openPostgres(url: string, max: number, timeouts: DatabaseTimeouts): Promise<Database> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const client = postgres(url, {
    max,
    idle_timeout: 30,
    connect_timeout: Math.ceil(timeouts.connectMs / 1000),
    // NOTICEs ("schema already exists, skipping") are noise in the logs.
    onnotice: () => {},
    connection: { application_name: "hearth", statement_timeout: timeouts.statementMs },
  });
  // A little over the server's own limit, so that a slow statement fails there, with its reason.
  const db: Db = drizzle({ client: withQueryTimeout(client, timeouts.statementMs + 1_000), schema });
  return {
    kind: "postgres",
    db,
    where: scrub(url) as string,
    client,
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dir: string | undefined): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const client = await PGlite.create(dir === undefined ? {} : { dataDir: dir });
  const db: Db = drizzle({ client, schema });
  return {
    kind: "pglite",
    db,
    where: dir === undefined ? "PGlite in memory" : `PGlite in ${dir}`,
    client,
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}
