import { describe, expect, it } from "vitest";
import {
  createAccount,
  ensureAccount,
  getAccount,
  hasAccountsOtherThan,
  listAccounts,
} from "../../src/db/queries/accounts.js";
import { pingDatabase } from "../../src/db/queries/health.js";
import { ACCOUNT_ID_PATTERN } from "../../src/db/schema/accounts.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

describe.each(testDatabaseBackends)("account queries on %s", (kind) => {
  const t = useTestDatabase(kind);

  it("answers a ping", async () => {
    await expect(pingDatabase(t.db)).resolves.toBeUndefined();
  });

  it("creates an account with defaults and reads it back", async () => {
    const created = await createAccount(t.db, { id: "acme", displayName: "Acme" });
    expect(created).toMatchObject({ id: "acme", displayName: "Acme", enterprise: false, maxDeployedModels: 100 });
    expect(created!.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(created!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await getAccount(t.db, "acme")).toEqual(created);
    expect(await getAccount(t.db, "nobody")).toBeNull();
  });

  it("keeps the given options", async () => {
    const created = await createAccount(t.db, {
      id: "big-co",
      displayName: "Big Co",
      enterprise: true,
      maxDeployedModels: 7,
    });
    expect(created).toMatchObject({ enterprise: true, maxDeployedModels: 7 });
  });

  it("returns null for a taken ID and leaves the first account alone", async () => {
    await createAccount(t.db, { id: "acme", displayName: "Acme" });
    expect(await createAccount(t.db, { id: "acme", displayName: "Other" })).toBeNull();
    expect((await getAccount(t.db, "acme"))!.displayName).toBe("Acme");
    expect(await ensureAccount(t.db, { id: "acme", displayName: "Other" })).toBe(false);
    expect(await ensureAccount(t.db, { id: "new", displayName: "New" })).toBe(true);
  });

  it("lists accounts and tells whether others exist", async () => {
    expect(await hasAccountsOtherThan(t.db, "hearth")).toBe(false);
    await createAccount(t.db, { id: "hearth", displayName: "Hearth" });
    expect(await hasAccountsOtherThan(t.db, "hearth")).toBe(false);
    await createAccount(t.db, { id: "b", displayName: "B" });
    expect(await hasAccountsOtherThan(t.db, "hearth")).toBe(true);
    expect((await listAccounts(t.db)).map((a) => a.id).sort()).toEqual(["b", "hearth"]);
  });

  it("rejects malformed account IDs in the database too", async () => {
    for (const id of ["", "Upper", "has_underscore", "-leading", "a".repeat(64), "spa ce"]) {
      expect(ACCOUNT_ID_PATTERN.test(id)).toBe(false);
      await expect(createAccount(t.db, { id, displayName: "x" }), id).rejects.toThrow();
    }
    for (const id of ["a", "a-1", "0", "a".repeat(63)]) {
      expect(ACCOUNT_ID_PATTERN.test(id)).toBe(true);
      expect(await createAccount(t.db, { id, displayName: "x" })).not.toBeNull();
    }
  });
});
