import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { authenticateApiKey } from "../../src/auth/api-keys.js";
import { adminKeyFilePath, bootstrapDatabase } from "../../src/auth/bootstrap.js";
import { openDatabase } from "../../src/db/client.js";
import { migrateDatabase } from "../../src/db/migrate.js";
import { createAccount, listAccounts } from "../../src/db/queries/accounts.js";
import { listApiKeys } from "../../src/db/queries/api-keys.js";
import {
  createTestPostgresDatabase,
  openTestDatabase,
  testDatabaseBackends,
  truncateAllTables,
  type TestDatabase,
} from "../helpers/test-databases.js";

let dataDir: string;
beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-bootstrap-"));
});
afterEach(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe.each(testDatabaseBackends)("bootstrapDatabase on %s", (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase(kind);
  });
  afterAll(() => t.cleanup());
  beforeEach(() => truncateAllTables(t.db));

  it("creates the built-in and default accounts and an admin key, written 0600 and logged once", async () => {
    const logs: string[] = [];
    const nested = path.join(dataDir, "nested", "dir");
    const result = await bootstrapDatabase(t.db, { dataDir: nested, log: (m) => logs.push(m), toTerminal: true });

    expect(result.createdAdminKey).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);
    const file = adminKeyFilePath(nested);
    expect((await fs.readFile(file, "utf8")).trim()).toBe(result.createdAdminKey);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(logs).toEqual([`Admin API key (shown once; also written to ${file}): ${result.createdAdminKey}`]);

    expect((await listAccounts(t.db)).map((a) => [a.id, a.displayName]).sort()).toEqual([
      ["default", "Default"],
      ["hearth", "Hearth"],
    ]);
    const keys = await listApiKeys(t.db);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ accountId: "default", scopes: ["inference", "models", "admin"] });
    expect(await authenticateApiKey(t.db, result.createdAdminKey!)).toMatchObject({
      accountId: "default",
      scopes: ["inference", "models", "admin"],
    });
  });

  it("prints a generated key only to a terminal; elsewhere, only where it was written", async () => {
    const logs: string[] = [];
    const result = await bootstrapDatabase(t.db, { dataDir, log: (m) => logs.push(m), toTerminal: false });
    expect(result.createdAdminKey).toMatch(/^hth_/);
    expect(logs).toEqual([
      `Created an admin API key, written to ${adminKeyFilePath(dataDir)} (not printed: this output is not a terminal).`,
    ]);
    await fs.rm(adminKeyFilePath(dataDir));
  });

  it("is idempotent", async () => {
    const first = await bootstrapDatabase(t.db, { dataDir });
    const logs: string[] = [];
    const second = await bootstrapDatabase(t.db, { dataDir, log: (m) => logs.push(m) });
    expect(first.createdAdminKey).toBeDefined();
    expect(second).toEqual({});
    expect(logs).toEqual([]);
    expect(await listAccounts(t.db)).toHaveLength(2);
    expect(await listApiKeys(t.db)).toHaveLength(1);
    expect((await fs.readFile(adminKeyFilePath(dataDir), "utf8")).trim()).toBe(first.createdAdminKey);
  });

  it("replaces a stale, world-readable key file with a 0600 one", async () => {
    const file = adminKeyFilePath(dataDir);
    await fs.writeFile(file, "stale\n", { mode: 0o644 });
    const result = await bootstrapDatabase(t.db, { dataDir });
    expect((await fs.readFile(file, "utf8")).trim()).toBe(result.createdAdminKey);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  it("uses HEARTH_ADMIN_KEY on first start, without writing or logging it", async () => {
    const adminKey = "operator-chosen-admin-key-0123456789";
    const logs: string[] = [];
    const result = await bootstrapDatabase(t.db, { dataDir, adminKey, log: (m) => logs.push(m) });
    expect(result.createdAdminKey).toBe(adminKey);
    expect(logs.join("\n")).not.toContain(adminKey);
    // The operator's key is not logged, but it is written where a generated one would be.
    expect((await fs.readFile(adminKeyFilePath(dataDir), "utf8")).trim()).toBe(adminKey);
    expect((await fs.stat(adminKeyFilePath(dataDir))).mode & 0o777).toBe(0o600);
    expect(await authenticateApiKey(t.db, adminKey)).toMatchObject({
      accountId: "default",
      scopes: ["inference", "models", "admin"],
    });
    // A second start with the same key creates nothing and says nothing.
    expect(await bootstrapDatabase(t.db, { dataDir, adminKey, log: (m) => logs.push(m) })).toEqual({});
    expect(logs).toHaveLength(1);
    expect(await listApiKeys(t.db)).toHaveLength(1);
  });

  it("ignores HEARTH_ADMIN_KEY once accounts exist, and says so", async () => {
    await createAccount(t.db, { id: "acme", displayName: "Acme" });
    const adminKey = "late-operator-admin-key-0123456789";
    const logs: string[] = [];
    expect(await bootstrapDatabase(t.db, { dataDir, adminKey, log: (m) => logs.push(m) })).toEqual({});
    expect(logs.join("\n")).toMatch(/HEARTH_ADMIN_KEY is set but the database already has accounts/);
    expect(await authenticateApiKey(t.db, adminKey)).toBeNull();
    expect((await listAccounts(t.db)).map((a) => a.id).sort()).toEqual(["acme", "hearth"]);
  });
});

describe("bootstrapDatabase on postgres, several processes at once", () => {
  // With "hearth" already there, nothing but the advisory lock orders the starts.
  it.each([
    ["a fresh database", false],
    ["a database that has only the built-in account", true],
  ])("creates exactly one admin key on %s", async (_label, builtinFirst) => {
    const target = await createTestPostgresDatabase();
    const replicas = await Promise.all(
      Array.from({ length: 5 }, () => openDatabase({ databaseUrl: target.url, dataDir })),
    );
    try {
      await Promise.all(replicas.map((r) => migrateDatabase(r)));
      if (builtinFirst) await createAccount(replicas[0]!.db, { id: "hearth", displayName: "Hearth" });
      const results = await Promise.all(replicas.map((r) => bootstrapDatabase(r.db, { dataDir })));
      const created = results.filter((r) => r.createdAdminKey !== undefined);
      expect(created).toHaveLength(1);
      expect(await listApiKeys(replicas[0]!.db)).toHaveLength(1);
      expect((await listAccounts(replicas[0]!.db)).map((a) => a.id).sort()).toEqual(["default", "hearth"]);
      expect((await fs.readFile(adminKeyFilePath(dataDir), "utf8")).trim()).toBe(created[0]!.createdAdminKey);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await target.drop();
    }
  });
});

describe("PGlite persisted under the data directory", () => {
  it("keeps its data across restarts at <dataDir>/db", async () => {
    const first = await openDatabase({ dataDir });
    expect(first.kind).toBe("pglite");
    await migrateDatabase(first);
    const { createdAdminKey } = await bootstrapDatabase(first.db, { dataDir });
    await first.close();
    expect((await fs.stat(path.join(dataDir, "db"))).isDirectory()).toBe(true);

    const second = await openDatabase({ dataDir });
    try {
      await migrateDatabase(second);
      expect(await bootstrapDatabase(second.db, { dataDir })).toEqual({});
      expect(await authenticateApiKey(second.db, createdAdminKey!)).toMatchObject({ accountId: "default" });
    } finally {
      await second.close();
    }
  });
});
