import { describe, expect, it } from "vitest";
import {
  apiKeyPrefix,
  authenticateApiKey,
  generateApiKey,
  hashApiKey,
  issueApiKey,
  PREFIX_LENGTH,
} from "../../src/auth/api-keys.js";
import type { Db } from "../../src/db/client.js";
import { createAccount } from "../../src/db/queries/accounts.js";
import {
  apiKeyHashExists,
  findApiKeyByPrefix,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  touchApiKeyLastUsed,
} from "../../src/db/queries/api-keys.js";
import { AppError } from "../../src/errors.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

describe("generateApiKey", () => {
  it("makes hth_ + 40 URL-safe characters, its prefix and its SHA-256", () => {
    const { key, prefix, hash } = generateApiKey();
    expect(key).toMatch(/^hth_[A-Za-z0-9_-]{40}$/);
    expect(prefix).toBe(key.slice(0, PREFIX_LENGTH));
    expect(hash).toBe(hashApiKey(key));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(generateApiKey().key).not.toBe(key);
  });

  it("hashes with SHA-256", () => {
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe.each(testDatabaseBackends)("API keys on %s", (kind) => {
  const t = useTestDatabase(kind, async (db) => {
    await createAccount(db, { id: "acme", displayName: "Acme" });
    await createAccount(db, { id: "other", displayName: "Other" });
  });

  it("authenticates the right key and records its use", async () => {
    const { key, apiKey } = await issueApiKey(t.db, { accountId: "acme", name: "ci", scopes: ["inference", "models"] });
    expect(apiKey).not.toHaveProperty("hash");
    expect(apiKey.lastUsedAt).toBeNull();
    const auth = await authenticateApiKey(t.db, key);
    expect(auth).toEqual({
      accountId: "acme",
      keyId: apiKey.id,
      scopes: ["inference", "models"],
      prefix: apiKeyPrefix(key),
    });
    const [listed] = await listApiKeys(t.db, "acme");
    expect(listed!.lastUsedAt).toBeInstanceOf(Date);
  });

  it("writes last_used_at at most once a minute", async () => {
    const { apiKey } = await issueApiKey(t.db, { accountId: "acme", name: "ci", scopes: ["inference", "models"] });
    expect(await touchApiKeyLastUsed(t.db, apiKey.id)).toBe(true);
    expect(await touchApiKeyLastUsed(t.db, apiKey.id)).toBe(false);
    expect(await touchApiKeyLastUsed(t.db, apiKey.id, 0)).toBe(true);
  });

  it("rejects a wrong key that shares the prefix, an unknown key and a revoked key", async () => {
    const { key, apiKey } = await issueApiKey(t.db, {
      accountId: "acme",
      name: "ci",
      scopes: ["inference", "models", "admin"],
    });
    const lastChar = key.at(-1) === "A" ? "B" : "A";
    expect(await authenticateApiKey(t.db, key.slice(0, -1) + lastChar)).toBeNull();
    expect(await authenticateApiKey(t.db, generateApiKey().key)).toBeNull();

    const revoked = await revokeApiKey(t.db, { prefix: apiKey.prefix });
    expect(revoked!.revokedAt).toBeInstanceOf(Date);
    expect(await authenticateApiKey(t.db, key)).toBeNull();
    // Revoking again keeps the first time.
    expect((await revokeApiKey(t.db, { id: apiKey.id }))!.revokedAt).toEqual(revoked!.revokedAt);
  });

  it("rejects malformed keys without asking the database", async () => {
    const noDatabase = new Proxy({} as Db, {
      get() {
        throw new Error("the database was queried");
      },
    });
    for (const key of [
      "",
      "hth_",
      "short",
      " ".repeat(30),
      `hth_${"a".repeat(39)} `,
      "x".repeat(300),
      "hth_ünïcödé_ünïcödé_ünïcödé",
    ]) {
      expect(await authenticateApiKey(noDatabase, key), JSON.stringify(key)).toBeNull();
      expect(await authenticateApiKey(t.db, key), JSON.stringify(key)).toBeNull();
    }
  });

  it("accepts an operator-chosen key of another shape", async () => {
    const { key } = await issueApiKey(t.db, {
      accountId: "acme",
      name: "env",
      scopes: ["inference", "models", "admin"],
      key: "my-own-admin-key-of-some-length",
    });
    expect(await authenticateApiKey(t.db, key)).toMatchObject({
      accountId: "acme",
      scopes: ["inference", "models", "admin"],
      prefix: "my-own-admin",
    });
    expect(await apiKeyHashExists(t.db, hashApiKey(key))).toBe(true);
    await expect(
      issueApiKey(t.db, {
        accountId: "acme",
        name: "dup",
        scopes: ["inference", "models", "admin"],
        key: "my-own-admin-key-but-another",
      }),
    ).rejects.toMatchObject({ code: "conflict" });
    await expect(
      issueApiKey(t.db, { accountId: "acme", name: "bad", scopes: ["inference", "models", "admin"], key: "too short" }),
    ).rejects.toBeInstanceOf(AppError);
  });

  it("refuses keys for a missing account", async () => {
    await expect(
      issueApiKey(t.db, { accountId: "nobody", name: "x", scopes: ["inference", "models"] }),
    ).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("lists keys per account without hashes, and revokes only within an account when asked", async () => {
    const a = await issueApiKey(t.db, { accountId: "acme", name: "one", scopes: ["inference", "models"] });
    await issueApiKey(t.db, { accountId: "acme", name: "two", scopes: ["inference", "models", "admin"] });
    const o = await issueApiKey(t.db, { accountId: "other", name: "three", scopes: ["inference", "models"] });
    expect((await listApiKeys(t.db, "acme")).map((k) => k.name).sort()).toEqual(["one", "two"]);
    expect(await listApiKeys(t.db)).toHaveLength(3);
    for (const k of await listApiKeys(t.db)) expect(k).not.toHaveProperty("hash");

    expect(await revokeApiKey(t.db, { prefix: o.apiKey.prefix }, { accountId: "acme" })).toBeNull();
    expect(await authenticateApiKey(t.db, o.key)).not.toBeNull();
    expect(await revokeApiKey(t.db, { id: "not-a-uuid" })).toBeNull();
    expect(await revokeApiKey(t.db, { prefix: "hth_missing0" })).toBeNull();
    expect(await revokeApiKey(t.db, { id: a.apiKey.id }, { accountId: "acme" })).not.toBeNull();
  });

  it("stores only the hash, and a duplicate prefix is refused", async () => {
    const { key, prefix, hash } = generateApiKey();
    expect(
      await insertApiKey(t.db, { accountId: "acme", name: "x", scopes: ["inference", "models"], prefix, hash }),
    ).not.toBeNull();
    const row = await findApiKeyByPrefix(t.db, prefix);
    expect(row!.hash).toBe(hash);
    expect(JSON.stringify(row)).not.toContain(key);
    expect(
      await insertApiKey(t.db, { accountId: "other", name: "y", scopes: ["inference", "models"], prefix, hash }),
    ).toBeNull();
  });
});
