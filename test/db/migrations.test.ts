import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { migrateDatabase, migrationsFolder } from "../../src/db/migrate.js";
import { createTestPostgresDatabase, openTestDatabase, testDatabaseBackends } from "../helpers/test-databases.js";

async function tableNames(db: Parameters<typeof migrateDatabase>[0]["db"]): Promise<string[]> {
  // db.execute returns an array on postgres-js and { rows } on PGlite; a select avoids the difference.
  const rows = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
  );
  const list = Array.isArray(rows) ? rows : (rows as unknown as { rows: { table_name: string }[] }).rows;
  return list.map((r) => r.table_name);
}

const hearthTables = ["accounts", "api_keys", "deployments", "models"];

describe.each(testDatabaseBackends)("migrations on %s", (kind) => {
  it("apply from scratch and are a no-op the second time", async () => {
    const t = await openTestDatabase(kind, { migrate: false });
    try {
      await migrateDatabase(t.database);
      expect(await tableNames(t.db)).toEqual(expect.arrayContaining(hearthTables));
      await migrateDatabase(t.database);
      expect(await tableNames(t.db)).toEqual(expect.arrayContaining(hearthTables));
    } finally {
      await t.cleanup();
    }
  });
});

describe("migrations on postgres, several replicas at once", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("apply once without racing", async () => {
    const target = await createTestPostgresDatabase();
    cleanups.push(target.drop);
    const replicas = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase({ databaseUrl: target.url, dataDir: "/nonexistent" })),
    );
    cleanups.push(async () => {
      await Promise.all(replicas.map((r) => r.close()));
    });
    await Promise.all(replicas.map((r) => migrateDatabase(r)));
    expect(await tableNames(replicas[0]!.db)).toEqual(expect.arrayContaining(hearthTables));
    const applied = await replicas[0]!.db.execute<{ n: number }>(
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    );
    expect(Array.isArray(applied) ? applied[0] : undefined).toEqual({
      n: readMigrationFiles({ migrationsFolder }).length,
    });
  });
});
