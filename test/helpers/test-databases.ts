/**
 * Databases for tests, on both backends Hearth runs on:
 *   - "pglite": an in-memory PGlite, nothing to clean up but the handle;
 *   - "postgres": a fresh database `hearth_test_<random>` on the server named by
 *     HEARTH_TEST_POSTGRES_URL (an admin URL; default postgres://postgres@127.0.0.1:5432/postgres),
 *     dropped again by `cleanup()`.
 *
 *   describe.each(testDatabaseBackends)("%s", (kind) => {
 *     const t = useTestDatabase(kind, (db) => createAccount(db, { id: "acme", displayName: "Acme" }));
 *     it("…", async () => { await getAccount(t.db, "acme"); });
 *   });
 */
import crypto from "node:crypto";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { openDatabase, type Database, type Db } from "../../src/db/client.js";
import { migrateDatabase } from "../../src/db/migrate.js";

export const testDatabaseBackends = ["pglite", "postgres"] as const;
export type TestDatabaseBackend = (typeof testDatabaseBackends)[number];

export const testPostgresAdminUrl =
  process.env.HEARTH_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestPostgresDatabase {
  /** URL of the new, empty database (no migrations applied). */
  url: string;
  name: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
}

export interface TestDatabase {
  kind: TestDatabaseBackend;
  database: Database;
  db: Db;
  /** The PostgreSQL URL, for child processes; undefined on PGlite. */
  url: string | undefined;
  /** Closes the database and, on PostgreSQL, drops it. */
  cleanup(): Promise<void>;
}

async function withAdminConnection<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(testPostgresAdminUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    return await fn(admin);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `Test PostgreSQL at ${redact(testPostgresAdminUrl)} failed (set HEARTH_TEST_POSTGRES_URL): ${reason}`,
      {
        cause: err,
      },
    );
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Creates an empty PostgreSQL database for one test file (or test). */
export async function createTestPostgresDatabase(): Promise<TestPostgresDatabase> {
  const name = `hearth_test_${crypto.randomBytes(6).toString("hex")}`;
  await withAdminConnection((admin) => admin.unsafe(`create database "${name}"`));
  const url = new URL(testPostgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withAdminConnection((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`)).then(() => {}),
  };
}

/** A migrated database of the given kind, and how to get rid of it. */
export async function openTestDatabase(
  kind: TestDatabaseBackend,
  opts: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const created = kind === "postgres" ? await createTestPostgresDatabase() : undefined;
  const database = created
    ? await openDatabase({ databaseUrl: created.url, dataDir: "/nonexistent" })
    : await openDatabase({ pglite: "memory" });
  try {
    if (opts.migrate ?? true) await migrateDatabase(database);
  } catch (err) {
    await database.close();
    await created?.drop();
    throw err;
  }
  return {
    kind,
    database,
    db: database.db,
    url: created?.url,
    cleanup: async () => {
      await database.close();
      await created?.drop();
    },
  };
}

/**
 * One migrated database for the tests of the calling describe block: opened before them,
 * emptied and seeded before each, closed (and on PostgreSQL dropped) after them.
 */
export function useTestDatabase(
  kind: TestDatabaseBackend,
  seed: (db: Db) => Promise<unknown> = async () => {},
): { readonly db: Db } {
  let opened: TestDatabase | undefined;
  beforeAll(async () => {
    opened = await openTestDatabase(kind);
  });
  afterAll(() => opened?.cleanup());
  beforeEach(async () => {
    await truncateAllTables(opened!.db);
    await seed(opened!.db);
  });
  return {
    get db() {
      if (!opened) throw new Error("useTestDatabase: the database opens in beforeAll; use t.db inside a test");
      return opened.db;
    },
  };
}

/** Empties every Hearth table (between tests sharing one database). */
export async function truncateAllTables(db: Db): Promise<void> {
  await db.execute(
    sql`truncate table batch_results, batches, files, usage_records, usage_daily, usage_rollup, deployment_events, deployments, models, api_keys, accounts cascade`,
  );
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}
