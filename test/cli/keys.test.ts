import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount } from "../helpers/management.js";
import { json, runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";
import { testModelDir } from "../helpers/test-models.js";

/** `hearth create key`, `list keys`, `revoke key`: the real binary against a started Hearth. */
describe("hearth and API keys", () => {
  let hearth: TestHearth;
  let config: Awaited<ReturnType<typeof tempConfigDir>>;
  beforeAll(async () => {
    [hearth, config] = await Promise.all([
      startTestHearth({ worker: false, env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } }),
      tempConfigDir(),
    ]);
  });
  afterAll(async () => {
    await hearth?.close();
    await config?.remove();
  });
  const run = (args: string[], key = hearth.apiKey) =>
    runHearthCli(args, config.dir, { env: { HEARTH_API_KEY: key, HEARTH_BASE_URL: hearth.url } });

  it("creates a scoped, expiring key, printed once; lists it; revokes it; it then stops working", async () => {
    const created = await run(["create", "key", "web-frontend", "--scopes", "inference", "--expires", "30d"]);
    expect(created.code, created.stderr).toBe(0);
    const lines = created.stdout.trim().split("\n");
    expect(lines[0]).toMatch(
      /^Created key "web-frontend" \(prefix hth_\S{8}, scopes inference, expiring \d{4}-\d\d-\d\dT[\d:]+Z\) for account "default"\.$/,
    );
    const key = lines.at(-1)!;
    expect(key).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);

    const listed = await run(["list", "keys"]);
    expect(listed.stdout.split("\n")[0]).toMatch(
      /^PREFIX\s+ACCOUNT\s+NAME\s+SCOPES\s+CREATED\s+LAST USED\s+EXPIRES\s+REVOKED$/,
    );
    expect(listed.stdout).toContain(key.slice(0, 12));
    expect(listed.stdout).not.toContain(key);
    const rows = json(await run(["list", "keys", "--output", "json"])) as { prefix: string; scopes: string[] }[];
    expect(rows.find((k) => k.prefix === key.slice(0, 12))).toMatchObject({ scopes: ["inference"] });

    // The new key generates but cannot upload: the server says which scope it lacks.
    const upload = await run(
      ["create", "model", "sneaky", path.join(testModelDir, "examples", "hearth-tiny-lora")],
      key,
    );
    expect(upload.code).toBe(1);
    expect(upload.stderr).toContain("needs a key with the models scope");
    expect((await run(["whoami"], key)).code).toBe(0);

    const revoked = await run(["revoke", "key", key.slice(0, 12)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked key ${key.slice(0, 12)} ("web-frontend", account "default")`);
    const after = await run(["whoami"], key);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain("The server refused the API key");
  });

  it("answers --output json with the key and its resource; --quiet with the key alone", async () => {
    const doc = json(await run(["create", "key", "ci", "--scopes", "inference,models", "--output", "json"]));
    expect(doc).toMatchObject({ key: expect.stringMatching(/^hth_/), name: "ci", scopes: ["inference", "models"] });
    const quiet = await run(["create", "key", "--quiet"]);
    expect(quiet.stdout.trim()).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);
  });

  it("refuses bad scopes and expiries before asking the server", async () => {
    const scopes = await run(["create", "key", "x", "--scopes", "root"]);
    expect(scopes.code).toBe(2);
    expect(scopes.stderr).toContain('Invalid --scopes "root": use one or more of inference, models, admin');
    const expiry = await run(["create", "key", "x", "--expires", "yesterday"]);
    expect(expiry.code).toBe(2);
    expect(expiry.stderr).toContain('Invalid --expires "yesterday"');
  });

  it("manages a member's own account's keys through its account's endpoints, no stronger than its key", async () => {
    const member = await createTestAccount(hearth, "plain");
    const created = await run(["create", "key", "bot", "--scopes", "inference", "--quiet"], member.apiKey);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    const listed = json(await run(["list", "keys", "--output", "json"], member.apiKey)) as { accountId: string }[];
    expect(listed.map((k) => k.accountId)).toEqual(["plain", "plain"]);
    const stronger = await run(["create", "key", "root", "--scopes", "admin"], member.apiKey);
    expect(stronger.code).toBe(1);
    expect(stronger.stderr).toContain("A key can only make keys with scopes it has itself: this one lacks admin.");
    // Another account's key is not its to revoke: the words of a key that does not exist.
    const theirs = await run(["revoke", "key", hearth.apiKey.slice(0, 12)], member.apiKey);
    expect(theirs.code).toBe(4); // not found
    expect(theirs.stderr).toContain(`No API key has the prefix "${hearth.apiKey.slice(0, 12)}"`);
    expect((await run(["whoami"])).code).toBe(0);
    const revoked = await run(["revoke", "key", key.slice(0, 12)], member.apiKey);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await run(["whoami"], key)).code).toBe(3);
    // A key without the models scope manages none.
    const frontEnd = await createTestAccount(hearth, "front", { scopes: ["inference"] });
    const noModels = await run(["list", "keys"], frontEnd.apiKey);
    expect(noModels.code).toBe(1);
    expect(noModels.stderr).toContain("needs a key with the models scope");
  });
});
