import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiKeyAuthenticator } from "../../src/auth/api-key-authenticator.js";
import { hashApiKey, issueApiKey } from "../../src/auth/api-keys.js";
import type { Db } from "../../src/db/client.js";
import { createAccount } from "../../src/db/queries/accounts.js";
import { revokeApiKey } from "../../src/db/queries/api-keys.js";
import { openTestDatabase, truncateAllTables, type TestDatabase } from "../helpers/test-databases.js";

/** The database, counting the reads made through it. */
function countingDb(db: Db) {
  const counter = { selects: 0 };
  const counted = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "select") counter.selects++;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: counted, counter };
}

describe("ApiKeyAuthenticator", () => {
  let t: TestDatabase;
  let now: number;
  const clock = () => now;
  beforeAll(async () => {
    t = await openTestDatabase("pglite");
  });
  afterAll(() => t.cleanup());
  beforeEach(async () => {
    now = 1_000_000;
    await truncateAllTables(t.db);
    await createAccount(t.db, { id: "acme", displayName: "Acme" });
  });
  const issue = () => issueApiKey(t.db, { accountId: "acme", name: "ci", scopes: ["inference", "models"] });

  it("answers a repeated key from memory, without the database", async () => {
    const { key, apiKey } = await issue();
    const { db, counter } = countingDb(t.db);
    const keys = new ApiKeyAuthenticator(db, { ttlMs: 5_000, now: clock });
    const first = await keys.authenticate(key);
    expect(first).toMatchObject({ accountId: "acme", keyId: apiKey.id, scopes: ["inference", "models"] });
    const reads = counter.selects;
    expect(reads).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(await keys.authenticate(key)).toEqual(first);
    expect(counter.selects).toBe(reads);
  });

  it("stops accepting a revoked key once the TTL has passed", async () => {
    const { key, apiKey } = await issue();
    const keys = new ApiKeyAuthenticator(t.db, { ttlMs: 5_000, now: clock });
    expect(await keys.authenticate(key)).not.toBeNull();
    await revokeApiKey(t.db, { id: apiKey.id });
    now += 4_999;
    expect(await keys.authenticate(key)).not.toBeNull(); // still the cached check
    now += 1;
    expect(await keys.authenticate(key)).toBeNull();
    now += 60_000;
    expect(await keys.authenticate(key)).toBeNull();
  });

  it("asks the database every time with a TTL of 0", async () => {
    const { key, apiKey } = await issue();
    const { db, counter } = countingDb(t.db);
    const keys = new ApiKeyAuthenticator(db, { ttlMs: 0, now: clock });
    expect(await keys.authenticate(key)).not.toBeNull();
    const reads = counter.selects;
    expect(await keys.authenticate(key)).not.toBeNull();
    expect(counter.selects).toBeGreaterThan(reads);
    await revokeApiKey(t.db, { id: apiKey.id });
    expect(await keys.authenticate(key)).toBeNull();
  });

  it("does not remember failures", async () => {
    const keys = new ApiKeyAuthenticator(t.db, { ttlMs: 5_000, now: clock });
    const key = "hth_chosen_by_the_operator_0123456789";
    expect(await keys.authenticate(key)).toBeNull();
    await issueApiKey(t.db, { accountId: "acme", name: "later", scopes: ["inference", "models", "admin"], key });
    expect(await keys.authenticate(key)).toMatchObject({ accountId: "acme", scopes: ["inference", "models", "admin"] });
    expect(await keys.authenticate(`${key.slice(0, -1)}X`)).toBeNull();
    expect(await keys.authenticate("short")).toBeNull();
  });

  it("forgets a key at once when told (revocation in this process)", async () => {
    const { key, apiKey } = await issue();
    const other = await issue();
    const keys = new ApiKeyAuthenticator(t.db, { ttlMs: 5_000, now: clock });
    await keys.authenticate(key);
    await keys.authenticate(other.key);
    await revokeApiKey(t.db, { id: apiKey.id });
    await revokeApiKey(t.db, { id: other.apiKey.id });
    keys.forget(apiKey.id);
    expect(await keys.authenticate(key)).toBeNull();
    expect(await keys.authenticate(other.key)).not.toBeNull(); // only that key was forgotten
  });

  it("keys its memory by the key's hash, never by the key", async () => {
    const { key } = await issue();
    const keys = new ApiKeyAuthenticator(t.db, { ttlMs: 5_000, now: clock });
    await keys.authenticate(key);
    const stored = [...(keys as unknown as { cache: { entries: Map<string, unknown> } }).cache.entries.keys()];
    expect(stored).toEqual([hashApiKey(key)]);
  });
});
