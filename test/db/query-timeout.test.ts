import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.js";
import { isDatabaseUnavailable } from "../../src/db/connection-errors.js";
import { eventually } from "../helpers/eventually.js";
import { startFreezableProxy, type FreezableProxy } from "../helpers/freezable-proxy.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../helpers/test-databases.js";

const STATEMENT_MS = 500;

/** How long `work` took to fail, and with what. */
async function failure(work: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "it should have failed").toBeDefined();
  return { ms: Date.now() - started, error };
}

// A PostgreSQL that stops answering (here: a proxy that stops forwarding, connections open)
// enforces no timeout of its own; Hearth's (HEARTH_DB_*_TIMEOUT_MS) make it a 503 in bounded time.
describe("PostgreSQL timeouts", () => {
  let pg: TestPostgresDatabase;
  let proxy: FreezableProxy;
  let database: Database;
  let dataDir: string;
  beforeAll(async () => {
    pg = await createTestPostgresDatabase();
    proxy = await startFreezableProxy(pg.url);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-db-timeouts-"));
    database = await openDatabase({
      databaseUrl: proxy.url,
      dataDir,
      timeouts: { connectMs: 1_000, statementMs: STATEMENT_MS },
    });
  });
  afterAll(async () => {
    proxy?.thaw();
    await database?.close();
    await proxy?.close();
    await pg?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("ends a statement that runs too long on the server (statement_timeout), as unavailable", async () => {
    const { ms, error } = await failure(database.db.execute(sql`select pg_sleep(5)`));
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(ms).toBeLessThan(4_000);
  });

  it("fails a query to a server that stopped answering, then works again once it answers", async () => {
    await database.db.execute(sql`select 1`);
    proxy.freeze();
    try {
      const { ms, error } = await failure(database.db.execute(sql`select 1`));
      console.log(`a query to a frozen server failed after ${ms} ms: ${(error as Error).message}`);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(ms).toBeLessThan(STATEMENT_MS + 4_000);
      const transaction = await failure(database.db.transaction((tx) => tx.execute(sql`select 1`)));
      expect(isDatabaseUnavailable(transaction.error)).toBe(true);
    } finally {
      proxy.thaw();
    }
    await eventually(() => database.db.execute(sql`select 1`), 10_000);
  });

  it("rolls back a transaction that ran past its bound, rather than commit it once the server answers", async () => {
    await database.db.execute(sql`create table if not exists kept (x int)`);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const steps: string[] = [];
    const transaction = failure(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into kept values (1)`);
        steps.push("first");
        await gate;
        await tx.execute(sql`insert into kept values (2)`);
        steps.push("second");
      }),
    );
    await eventually(async () => expect(steps).toEqual(["first"]));
    proxy.freeze();
    release();
    try {
      expect(isDatabaseUnavailable((await transaction).error)).toBe(true);
    } finally {
      proxy.thaw();
    }
    // The server answers again: the second insert goes through, and then the transaction rolls back.
    await eventually(async () => expect(steps).toEqual(["first", "second"]), 10_000);
    await eventually(async () => {
      const open = await database.db.execute(
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and xact_start is not null and pid <> pg_backend_pid()`,
      );
      expect(open).toEqual([{ n: 0 }]);
    }, 10_000);
    expect(await database.db.execute(sql`select count(*)::int as n from kept`)).toEqual([{ n: 0 }]);
  });
});

describe("the API with a PostgreSQL that stopped answering", () => {
  let pg: TestPostgresDatabase;
  let proxy: FreezableProxy;
  let hearth: TestHearth;
  beforeAll(async () => {
    pg = await createTestPostgresDatabase();
    proxy = await startFreezableProxy(pg.url);
    hearth = await startTestHearth({
      worker: false,
      env: {
        DATABASE_URL: proxy.url,
        HEARTH_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
        HEARTH_DB_CONNECT_TIMEOUT_MS: "1000",
        HEARTH_AUTH_CACHE_TTL_MS: "0",
        HEARTH_MODEL_CACHE_TTL_MS: "0",
      },
    });
  }, 60_000);
  afterAll(async () => {
    proxy?.thaw();
    await hearth?.close();
    await proxy?.close();
    await pg?.drop();
  });

  const models = () => fetch(`${hearth.baseURL}/models`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });

  it("answers 503 with Retry-After in bounded time, and 200 again once it answers", async () => {
    expect((await models()).status).toBe(200);
    proxy.freeze();
    try {
      const started = Date.now();
      const res = await models();
      const ms = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
      expect(ms).toBeLessThan(STATEMENT_MS + 4_000);
    } finally {
      proxy.thaw();
    }
    await eventually(async () => expect((await models()).status).toBe(200), 10_000);
  }, 30_000);
});
