import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateApiKey } from "../../src/auth/api-keys.js";
import { openDatabase, type Database } from "../../src/db/client.js";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../helpers/test-databases.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = path.join(root, "node_modules", ".bin", "tsx");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function admin(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name === "DATABASE_URL" || name.startsWith("HEARTH_")) delete base[name];
  return new Promise((resolve) => {
    execFile(tsx, ["src/admin/main.ts", ...args], { cwd: root, env: { ...base, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("npm run admin against PostgreSQL", () => {
  let target: TestPostgresDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    target = await createTestPostgresDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-"));
    env = { DATABASE_URL: target.url, HEARTH_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await target.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("manages accounts and keys end to end", async () => {
    const created = await admin(
      env,
      "create-account",
      "acme",
      "--display-name",
      "Acme Inc",
      "--enterprise",
      "--max-deployed",
      "5",
      "--output",
      "json",
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      id: "acme",
      displayName: "Acme Inc",
      enterprise: true,
      maxDeployedModels: 5,
    });
    // The first run also initialised the database: the admin key went to stderr and the key file.
    expect(created.stderr).toMatch(/Admin API key \(shown once; also written to .*admin-api-key\): hth_/);

    const again = await admin(env, "create-account", "acme");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Account "acme" already exists.');

    const key = await admin(env, "create-key", "acme", "--name", "ci", "--role", "admin", "--output", "json");
    expect(key.code, key.stderr).toBe(0);
    const issued = JSON.parse(key.stdout) as { key: string; prefix: string; role: string; accountId: string };
    expect(issued).toMatchObject({ role: "admin", accountId: "acme" });
    expect(issued.key).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);
    expect(issued).not.toHaveProperty("hash");

    const textKey = await admin(env, "create-key", "acme");
    expect(textKey.code, textKey.stderr).toBe(0);
    const printedKey = textKey.stdout.trim().split("\n").at(-1)!;
    expect(printedKey).toMatch(/^hth_/);
    expect(textKey.stdout).toContain("user key");

    const listed = await admin(env, "list-keys", "acme", "--output", "json");
    const keys = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(keys.map((k) => k.prefix)).toEqual([issued.prefix, printedKey.slice(0, 12)]);
    for (const k of keys)
      expect(Object.keys(k).sort()).toEqual([
        "accountId",
        "createdAt",
        "id",
        "lastUsedAt",
        "name",
        "prefix",
        "revokedAt",
        "role",
      ]);
    expect(listed.stdout).not.toContain(issued.key);

    const table = await admin(env, "list-keys");
    expect(table.stdout.split("\n")[0]).toMatch(/^PREFIX\s+ACCOUNT\s+NAME\s+ROLE\s+CREATED\s+LAST USED\s+REVOKED$/);
    expect(table.stdout).toContain(issued.prefix);

    const accounts = await admin(env, "list-accounts", "--output", "json");
    expect((JSON.parse(accounts.stdout) as { id: string }[]).map((a) => a.id).sort()).toEqual([
      "acme",
      "default",
      "hearth",
    ]);

    let database: Database | undefined;
    try {
      database = await openDatabase({ databaseUrl: target.url, dataDir });
      expect(await authenticateApiKey(database.db, issued.key)).toMatchObject({ accountId: "acme", role: "admin" });
      const revoked = await admin(env, "revoke-key", issued.prefix);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toContain(`Revoked key ${issued.prefix}`);
      expect(await authenticateApiKey(database.db, issued.key)).toBeNull();
      expect(await authenticateApiKey(database.db, printedKey)).toMatchObject({ accountId: "acme", role: "user" });
    } finally {
      await database?.close();
    }

    const missing = await admin(env, "revoke-key", "hth_nothere0");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No API key with prefix "hth_nothere0".');
    const noAccount = await admin(env, "create-key", "nobody");
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('Account "nobody" does not exist.');
  });

  it("rejects usage errors with status 2 before touching the database", async () => {
    const broken = { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", HEARTH_DATA_DIR: dataDir };
    const cases: [string[], RegExp][] = [
      [[], /No command given/],
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["create-account"], /Missing required argument .id./],
      [["create-account", "Bad_ID"], /Invalid account ID "Bad_ID"/],
      [["create-account", "ok", "--max-deployed", "many"], /Invalid --max-deployed "many"/],
      [["create-key", "acme", "--role", "root"], /Invalid --role "root"/],
      [["list-accounts", "--output", "yaml"], /argument 'yaml' is invalid/],
      [["list-accounts", "--bogus"], /Unknown option '--bogus'/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(broken, ...args)));
    runs.forEach((run, i) => {
      expect(run.code, cases[i]![0].join(" ")).toBe(2);
      expect(run.stderr).toMatch(cases[i]![1]);
      expect(run.stderr).toContain("Usage: npm run admin");
    });
    const help = await admin(broken, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("create-account [options] <id>");
  });

  it("fails with status 1 and a message when the database is unreachable", async () => {
    const run = await admin(
      { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none", HEARTH_DATA_DIR: dataDir },
      "list-accounts",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: /);
  });
});

describe("npm run admin against PGlite", () => {
  it("uses <HEARTH_DATA_DIR>/db when DATABASE_URL is unset", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-pglite-"));
    try {
      const env = { HEARTH_DATA_DIR: dataDir };
      const created = await admin(env, "create-account", "solo");
      expect(created.code, created.stderr).toBe(0);
      const listed = await admin(env, "list-accounts");
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^solo\s/m);
      expect((await fs.stat(path.join(dataDir, "db"))).isDirectory()).toBe(true);
      expect((await fs.stat(path.join(dataDir, "admin-api-key"))).mode & 0o777).toBe(0o600);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
