import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount } from "../helpers/management.js";
import { freePort } from "../helpers/net.js";
import { runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../helpers/test-databases.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = path.join(root, "node_modules", ".bin", "tsx");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** No `hearth signin` profile unless a test gives HEARTH_CONFIG_DIR. */
const noConfigDir = path.join(os.tmpdir(), "hearth-admin-test-no-config");

function admin(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(base)) {
    if (name === "DATABASE_URL" || name === "PORT" || name.startsWith("HEARTH_")) delete base[name];
  }
  base.HEARTH_CONFIG_DIR = noConfigDir;
  return new Promise((resolve) => {
    execFile(tsx, ["src/admin/main.ts", ...args], { cwd: root, env: { ...base, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("npm run admin through the server's admin endpoints", () => {
  let hearth: TestHearth;
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false, env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } });
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-"));
    env = { HEARTH_BASE_URL: hearth.url, HEARTH_API_KEY: hearth.apiKey, HEARTH_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await hearth?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const whoami = (key: string) =>
    fetch(`${hearth.baseURL}/whoami`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

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
      accountId: "acme",
      displayName: "Acme Inc",
      enterprise: true,
      maxDeployedModels: null,
    });

    const limited = await admin(env, "set-limits", "acme", "--requests-per-minute", "120", "--max-models", "5");
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toContain("requestsPerMinute: 120");
    const reset = await admin(env, "set-limits", "acme", "--max-models", "default", "--output", "json");
    expect(JSON.parse(reset.stdout).limits).toMatchObject({ requestsPerMinute: 120, maxModels: 100_000 });

    const again = await admin(env, "create-account", "acme");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Account "acme" already exists.');

    const key = await admin(
      env,
      "create-key",
      "acme",
      "--name",
      "ci",
      "--scopes",
      "inference,models,admin",
      "--output",
      "json",
    );
    expect(key.code, key.stderr).toBe(0);
    const issued = JSON.parse(key.stdout) as { key: string; prefix: string; scopes: string[]; accountId: string };
    expect(issued).toMatchObject({ scopes: ["inference", "models", "admin"], accountId: "acme" });
    expect(issued.key).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);

    const textKey = await admin(env, "create-key", "acme");
    expect(textKey.code, textKey.stderr).toBe(0);
    const printedKey = textKey.stdout.trim().split("\n").at(-1)!;
    expect(printedKey).toMatch(/^hth_/);
    expect(textKey.stdout).toContain("scopes inference, models)");

    // Scopes and an expiry, as the CLI takes them.
    const scoped = await admin(
      env,
      "create-key",
      "acme",
      "--scopes",
      "inference",
      "--expires",
      "30d",
      "--output",
      "json",
    );
    expect(scoped.code, scoped.stderr).toBe(0);
    const expiry = Date.parse((JSON.parse(scoped.stdout) as { expireTime: string }).expireTime);
    expect(Math.abs(expiry - (Date.now() + 30 * 86_400_000))).toBeLessThan(120_000);

    const listed = await admin(env, "list-keys", "acme", "--output", "json");
    const keys = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(keys.map((k) => k.prefix).slice(0, 2)).toEqual([issued.prefix, printedKey.slice(0, 12)]);
    expect(keys.map((k) => k.scopes)).toEqual([
      ["inference", "models", "admin"],
      ["inference", "models"],
      ["inference"],
    ]);
    for (const k of keys)
      expect(Object.keys(k).sort()).toEqual([
        "accountId",
        "createTime",
        "expireTime",
        "lastUseTime",
        "name",
        "prefix",
        "revokeTime",
        "scopes",
      ]);
    expect(listed.stdout).not.toContain(issued.key);

    const table = await admin(env, "list-keys");
    expect(table.stdout.split("\n")[0]).toMatch(
      /^PREFIX\s+ACCOUNT\s+NAME\s+SCOPES\s+CREATED\s+LAST USED\s+EXPIRES\s+REVOKED$/,
    );
    expect(table.stdout).toContain(issued.prefix);

    const accounts = await admin(env, "list-accounts", "--output", "json");
    expect((JSON.parse(accounts.stdout) as { accountId: string }[]).map((a) => a.accountId).sort()).toEqual([
      "acme",
      "default",
      "hearth",
    ]);

    expect(await whoami(issued.key)).toBe(200);
    const revoked = await admin(env, "revoke-key", issued.prefix);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked key ${issued.prefix}`);
    expect(await whoami(issued.key)).toBe(401);
    expect(await whoami(printedKey)).toBe(200);

    const missing = await admin(env, "revoke-key", "hth_nothere0");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No API key has the prefix "hth_nothere0".');
    const noAccount = await admin(env, "create-key", "nobody");
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('Account "nobody" does not exist.');
    const builtin = await admin(env, "create-key", "hearth", "--scopes", "models");
    expect(builtin.code).toBe(1);
    expect(builtin.stderr).toContain('No API key can be made for the built-in account "hearth".');
  }, 180_000); // about a dozen `npm run admin` processes, each a tsx start: 27 s on a quiet machine

  it("takes the admin key from the data directory, and refuses a member key or none, with what to do", async () => {
    const keyDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-key-"));
    try {
      await fs.writeFile(path.join(keyDir, "admin-api-key"), `${hearth.apiKey}\n`, { mode: 0o600 });
      const fromFile = await admin({ HEARTH_BASE_URL: hearth.url, HEARTH_DATA_DIR: keyDir }, "list-accounts");
      expect(fromFile.code, fromFile.stderr).toBe(0);
    } finally {
      await fs.rm(keyDir, { recursive: true, force: true });
    }
    const member = await createTestAccount(hearth, "plain");
    const refused = await admin({ ...env, HEARTH_API_KEY: member.apiKey }, "list-accounts");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "This needs a key with the admin scope; this key has inference, models. An admin can issue one (docs/security.md).",
    );
    expect(refused.stderr).toContain("--database");
    const none = await admin({ HEARTH_BASE_URL: hearth.url, HEARTH_DATA_DIR: dataDir }, "list-accounts");
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/No admin key: set HEARTH_API_KEY/);
    const away = await admin({ ...env, HEARTH_BASE_URL: "http://127.0.0.1:1" }, "list-accounts");
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/Cannot reach Hearth at .*Is it running\?/);
  });

  // Found as the hearth CLI finds it: --server, HEARTH_BASE_URL, the server signin remembered
  // (with the key saved with it), else this machine's HOST and PORT.
  it("finds the server `hearth signin` remembered, with its key, else this machine's PORT", async () => {
    const config = await tempConfigDir();
    try {
      const signin = await runHearthCli(["signin", "--server", hearth.url], config.dir, { input: hearth.apiKey });
      expect(signin.code, signin.stderr).toBe(0);
      // The key saved with the server, not this machine's admin key file (which the server would refuse).
      await fs.writeFile(path.join(config.dir, "admin-api-key"), "hth_not_this_machines_key_0000000000000000\n");
      const remembered = await admin({ HEARTH_CONFIG_DIR: config.dir, HEARTH_DATA_DIR: config.dir }, "list-accounts");
      expect(remembered.code, remembered.stderr).toBe(0);
      expect(remembered.stdout).toMatch(/^default\s/m);
      // The environment comes before the remembered server (and then the key is the data directory's).
      const port = await freePort();
      const elsewhere = `http://127.0.0.1:${port}`;
      const env = { HEARTH_CONFIG_DIR: config.dir, HEARTH_DATA_DIR: dataDir, HEARTH_API_KEY: hearth.apiKey };
      const fromEnv = await admin({ ...env, HEARTH_BASE_URL: elsewhere }, "list-accounts");
      expect(fromEnv.stderr).toContain(`Cannot reach Hearth at ${elsewhere} (ECONNREFUSED)`);
      const fromOption = await admin(env, "list-accounts", "--server", elsewhere);
      expect(fromOption.stderr).toContain(`Cannot reach Hearth at ${elsewhere} (ECONNREFUSED)`);
    } finally {
      await config.remove();
    }
    const port = await freePort();
    const unsigned = await admin(
      { HEARTH_DATA_DIR: dataDir, HEARTH_API_KEY: hearth.apiKey, PORT: String(port) },
      "list-accounts",
    );
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain(`Cannot reach Hearth at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it("rejects usage errors with status 2 before reaching anything", async () => {
    const broken = { HEARTH_BASE_URL: "http://127.0.0.1:1", HEARTH_DATA_DIR: dataDir };
    const cases: [string[], RegExp][] = [
      [[], /No command given/],
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["create-account"], /Missing required argument .id./],
      [["create-account", "Bad_ID"], /Invalid account ID "Bad_ID"/],
      [["create-account", "ok", "--max-deployed", "many"], /Invalid --max-deployed "many"/],
      [["create-key", "acme", "--scopes", "root"], /Invalid --scopes "root"/],
      [["create-key", "acme", "--expires", "soon"], /Invalid --expires "soon"/],
      [["set-limits", "acme", "--max-models", "0"], /Invalid --max-models "0"/],
      [["set-limits", "acme"], /Give at least one limit/],
      [["create-key", "acme", "--expires", "2001-01-01T00:00:00Z"], /not in the future/],
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
    expect(help.stdout).toContain("--database");
  });
});

describe("npm run admin --database (bootstrap and recovery)", () => {
  let target: TestPostgresDatabase;
  let dataDir: string;
  beforeAll(async () => {
    target = await createTestPostgresDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-db-"));
  });
  afterAll(async () => {
    await target.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("initialises a new PostgreSQL database and manages it without a server", async () => {
    const env = { DATABASE_URL: target.url, HEARTH_DATA_DIR: dataDir };
    const created = await admin(env, "--database", "create-account", "acme", "--output", "json");
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ accountId: "acme", maxDeployedModels: 100 });
    // The first run also initialised the database: the admin key went to the key file, and not
    // to stderr, which is not a terminal here.
    expect(created.stderr).toMatch(/Created an admin API key, written to .*admin-api-key \(not printed/);
    expect(created.stderr).not.toContain("hth_");
    const key = await admin(
      env,
      "--database",
      "create-key",
      "acme",
      "--scopes",
      "inference,models,admin",
      "--output",
      "json",
    );
    expect(JSON.parse(key.stdout)).toMatchObject({
      key: expect.stringMatching(/^hth_/),
      scopes: ["inference", "models", "admin"],
    });
    const listed = await admin(env, "--database", "list-keys", "acme");
    expect(listed.stdout).toContain("admin");
  });

  it("fails with status 1 and a message when the database is unreachable", async () => {
    const run = await admin(
      { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none", HEARTH_DATA_DIR: dataDir },
      "--database",
      "list-accounts",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: /);
  });

  it("uses <HEARTH_DATA_DIR>/db when DATABASE_URL is unset", async () => {
    const pgliteDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-admin-pglite-"));
    try {
      const env = { HEARTH_DATA_DIR: pgliteDir };
      const created = await admin(env, "--database", "create-account", "solo");
      expect(created.code, created.stderr).toBe(0);
      const listed = await admin(env, "--database", "list-accounts");
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^solo\s/m);
      expect((await fs.stat(path.join(pgliteDir, "db"))).isDirectory()).toBe(true);
      expect((await fs.stat(path.join(pgliteDir, "admin-api-key"))).mode & 0o777).toBe(0o600);
    } finally {
      await fs.rm(pgliteDir, { recursive: true, force: true });
    }
  });
});
