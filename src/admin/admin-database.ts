import { bootstrapDatabase } from "../auth/bootstrap.js";
import { loadConfig } from "../config.js";
import { openDatabase, type Db } from "../db/client.js";
import { migrateDatabase } from "../db/migrate.js";

/**
 * The database the server uses (DATABASE_URL, else PGlite under HEARTH_DATA_DIR), migrated
 * and bootstrapped as a first start would, for one admin command: the operator's path for
 * bootstrap and recovery, when no admin key can reach the API.
 */
export async function withAdminDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    maxConnections: 2,
    timeouts: config.dbTimeouts,
  });
  try {
    await migrateDatabase(database);
    await bootstrapDatabase(database.db, {
      adminKey: config.adminKey,
      dataDir: config.dataDir,
      log: (msg) => process.stderr.write(`${msg}\n`),
      toTerminal: process.stderr.isTTY === true,
    });
    return await work(database.db);
  } finally {
    await database.close();
  }
}
