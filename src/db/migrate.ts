import { fileURLToPath } from "node:url";
import type { Database } from "./client.js";
import { advisoryLocks } from "./advisory-locks.js";

/** drizzle/ at the package root, wherever the process was started from. */
export const migrationsFolder = fileURLToPath(new URL("../../drizzle", import.meta.url));

/**
 * Applies the migrations in drizzle/ that the database has not seen yet. On PostgreSQL
 * a session advisory lock, held on a reserved connection while the migrator runs on
 * the pool, makes replicas that start together wait for each other.
 */
export async function migrateDatabase(database: Database): Promise<void> {
  if (database.kind === "pglite") {
    const { drizzle } = await import("drizzle-orm/pglite");
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(drizzle({ client: database.client }), { migrationsFolder });
    return;
  }
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  const [namespace, key] = advisoryLocks.migrate;
  const lockConnection = await database.client.reserve();
  try {
    await lockConnection`select pg_advisory_lock(${namespace}::int4, ${key}::int4)`;
    try {
      await migrate(drizzle({ client: database.client }), { migrationsFolder });
    } finally {
      await lockConnection`select pg_advisory_unlock(${namespace}::int4, ${key}::int4)`;
    }
  } finally {
    lockConnection.release();
  }
}
