import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../../src/auth/api-keys.js";
import { apiKeys } from "../../../src/db/schema/api-keys.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, defaultAccount, management, type Management } from "../../helpers/management.js";

// An account's own API keys through /v1/accounts/{account_id}/api-keys (services/account-keys.ts,
// docs/security.md): a key with the models scope makes keys no stronger than itself and living
// no longer, lists and revokes its account's keys, and never reaches another account's.
describe("an account's own API keys", () => {
  let hearth: TestHearth;
  let member: Management;
  let neighbour: Management;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false, env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } });
    member = await createTestAccount(hearth, "keys-member");
    neighbour = await createTestAccount(hearth, "keys-neighbour");
  });
  afterAll(() => hearth?.close());

  const keysOf = (who: Management) => `/v1/accounts/${who.accountId}/api-keys`;
  const revokedAt = async (prefix: string) => {
    const [row] = await hearth.api.database.db.select().from(apiKeys).where(eq(apiKeys.prefix, prefix));
    return row!.revokedAt;
  };

  it("creates a key shown once that works, lists it (never the key), and revokes it", async () => {
    const created = await member.call("POST", keysOf(member), { name: "ci", scopes: ["inference"] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { key, apiKey } = created.body;
    expect(apiKey).toMatchObject({ accountId: "keys-member", name: "ci", scopes: ["inference"], revokeTime: null });
    expect(key.startsWith(apiKey.prefix)).toBe(true);
    const made = management(hearth, "keys-member", key);
    expect((await made.call("GET", "/v1/models")).status).toBe(200);

    const listed = await member.call("GET", keysOf(member));
    expect(listed.status).toBe(200);
    expect(listed.body.apiKeys.map((k: { prefix: string }) => k.prefix)).toContain(apiKey.prefix);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    // Only this account's keys.
    expect(new Set(listed.body.apiKeys.map((k: { accountId: string }) => k.accountId))).toEqual(
      new Set(["keys-member"]),
    );

    const revoked = await member.call("DELETE", `${keysOf(member)}/${apiKey.prefix}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokeTime).not.toBeNull();
    expect((await made.call("GET", "/v1/models")).status).toBe(401);
  });

  it("makes keys only with scopes the calling key has: never an admin key from a member's", async () => {
    const refused = await member.call("POST", keysOf(member), { scopes: ["inference", "admin"] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: "forbidden",
      param: "scopes",
      message: "A key can only make keys with scopes it has itself: this one lacks admin.",
    });
    // Without scopes named: the defaults (inference, models) that the key has.
    const pipeline = await createTestAccount(hearth, "keys-pipeline", { scopes: ["models"] });
    const byDefault = await pipeline.call("POST", keysOf(pipeline), {});
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.apiKey.scopes).toEqual(["models"]);
    expect((await pipeline.call("POST", keysOf(pipeline), { scopes: ["inference"] })).status).toBe(403);
    // An admin key may make an admin key, for its own account.
    const admin = defaultAccount(hearth);
    const adminMade = await admin.call("POST", keysOf(admin), { scopes: ["admin"] });
    expect(adminMade.status).toBe(200);
    expect(adminMade.body.apiKey).toMatchObject({ accountId: "default", scopes: ["admin"] });
    // No admin key was made for the member's account, whatever was asked.
    const rows = await hearth.api.database.db.select().from(apiKeys).where(eq(apiKeys.accountId, "keys-member"));
    expect(rows.filter((r) => r.scopes.includes("admin"))).toEqual([]);
  });

  it("makes no key that outlives the calling key", async () => {
    const expiry = new Date(Date.now() + 3_600_000);
    const { key } = await issueApiKey(hearth.api.database.db, {
      accountId: "keys-member",
      name: "short-lived",
      scopes: ["inference", "models"],
      expiresAt: expiry,
    });
    const shortLived = management(hearth, "keys-member", key);
    const later = new Date(expiry.getTime() + 60_000).toISOString();
    const refused = await shortLived.call("POST", keysOf(member), { expireTime: later });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", param: "expireTime" });
    // No expiry asked: the calling key's.
    const byDefault = await shortLived.call("POST", keysOf(member), {});
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.apiKey.expireTime).toBe(expiry.toISOString());
    const sooner = new Date(expiry.getTime() - 60_000).toISOString();
    const earlier = await shortLived.call("POST", keysOf(member), { expireTime: sooner });
    expect(earlier.status).toBe(200);
    expect(earlier.body.apiKey.expireTime).toBe(sooner);
  });

  it("answers another account's keys as a missing account's, and another's prefix as a missing one", async () => {
    const theirKey = neighbour.apiKey.slice(0, 12);
    const missingAccount = await member.call("GET", "/v1/accounts/no-such-account/api-keys");
    for (const [method, path, body] of [
      ["GET", keysOf(neighbour), undefined],
      ["POST", keysOf(neighbour), { scopes: ["inference"] }],
      ["DELETE", `${keysOf(neighbour)}/${theirKey}`, undefined],
    ] as const) {
      const reply = await member.call(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body.error.message.replace("keys-neighbour", "no-such-account")).toBe(
        missingAccount.body.error.message,
      );
    }
    // The neighbour's prefix on the member's own route: the words of a prefix that never was.
    const theirs = await member.call("DELETE", `${keysOf(member)}/${theirKey}`);
    const never = await member.call("DELETE", `${keysOf(member)}/hth_NoSuchKey`);
    expect(theirs.status).toBe(404);
    expect(never.status).toBe(404);
    expect(theirs.body.error.message.replace(theirKey, "hth_NoSuchKey")).toBe(never.body.error.message);
    expect(await revokedAt(theirKey)).toBeNull();
    expect((await neighbour.call("GET", "/v1/whoami")).status).toBe(200);
  });

  it("needs the models scope: an inference-only key gets 403 on each route", async () => {
    const frontEnd = await createTestAccount(hearth, "keys-front-end", { scopes: ["inference"] });
    for (const [method, path] of [
      ["GET", keysOf(frontEnd)],
      ["POST", keysOf(frontEnd)],
      ["DELETE", `${keysOf(frontEnd)}/${frontEnd.apiKey.slice(0, 12)}`],
    ] as const) {
      const reply = await frontEnd.call(method, path, method === "POST" ? { scopes: ["inference"] } : undefined);
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error.message).toContain("needs a key with the models scope");
    }
    expect(await revokedAt(frontEnd.apiKey.slice(0, 12))).toBeNull();
  });

  it("revokes the calling key itself, which then stops working", async () => {
    const { key } = await issueApiKey(hearth.api.database.db, {
      accountId: "keys-member",
      name: "self",
      scopes: ["models"],
    });
    const self = management(hearth, "keys-member", key);
    const revoked = await self.call("DELETE", `${keysOf(self)}/${key.slice(0, 12)}`);
    expect(revoked.status).toBe(200);
    expect((await self.call("GET", keysOf(self))).status).toBe(401);
  });
});
