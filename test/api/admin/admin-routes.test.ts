import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractRoutes } from "../../../src/api/contract/document.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, defaultAccount, type Management } from "../../helpers/management.js";

/** Every admin route of the contract, with its path parameters filled in. */
const adminRoutes = contractRoutes
  .filter((r) => r.path.startsWith("/v1/admin/"))
  .map((r) => ({
    method: r.method.toUpperCase(),
    path: r.path.replace("{account_id}", "member-acct").replace("{prefix}", "hth_NoSuchKey"),
  }));

// Roles are enforced server-side in one place (requireRole in app.ts): a member key gets 403 on
// every admin route; an admin key creates accounts and keys over HTTP.
describe("the admin endpoints", () => {
  let hearth: TestHearth;
  let admin: Management;
  let member: Management;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false, env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } });
    admin = defaultAccount(hearth);
    member = await createTestAccount(hearth, "member-acct");
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("has admin routes to check", () => {
    expect(adminRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      "DELETE /v1/admin/api-keys/hth_NoSuchKey",
      "GET /v1/admin/accounts",
      "GET /v1/admin/api-keys",
      "PATCH /v1/admin/accounts/member-acct",
      "POST /v1/admin/accounts",
      "POST /v1/admin/accounts/member-acct/api-keys",
    ]);
  });

  it("answers a member key with 403 and an OpenAI-style error on every one, before reading the body", async () => {
    for (const { method, path } of adminRoutes) {
      const reply = await member.call(method, path, method === "POST" ? { accountId: "planted" } : undefined);
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body).toEqual({
        error: {
          message:
            "This needs a key with the admin scope; this key has inference, models. An admin can issue one (docs/security.md).",
          type: "permission_error",
          param: null,
          code: "forbidden",
        },
      });
    }
    expect(
      (await admin.call("GET", "/v1/admin/accounts")).body.accounts.map((a: { accountId: string }) => a.accountId),
    ).not.toContain("planted");
  });

  it("lets an admin key create an account and a key for it, list and revoke the key", async () => {
    const created = await admin.call("POST", "/v1/admin/accounts", { accountId: "newco", displayName: "New Co" });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ accountId: "newco", displayName: "New Co", maxDeployedModels: 100 });
    expect((await admin.call("POST", "/v1/admin/accounts", { accountId: "newco" })).status).toBe(409);
    const bad = await admin.call("POST", "/v1/admin/accounts", { accountId: "Not Valid" });
    expect(bad).toMatchObject({ status: 400, body: { error: { param: "accountId" } } });

    const listed = await admin.call("GET", "/v1/admin/accounts");
    expect(listed.status).toBe(200);
    expect(listed.body.accounts.map((a: { accountId: string }) => a.accountId)).toEqual(
      expect.arrayContaining(["default", "member-acct", "newco"]),
    );

    const issued = await admin.call("POST", "/v1/admin/accounts/newco/api-keys", { name: "ci" });
    expect(issued.status).toBe(200);
    const { key, apiKey } = issued.body as { key: string; apiKey: { prefix: string; role: string } };
    expect(apiKey).toMatchObject({ accountId: "newco", name: "ci", scopes: ["inference", "models"], revokeTime: null });
    expect(key.startsWith(apiKey.prefix)).toBe(true);
    const whoami = await fetch(`${hearth.baseURL}/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect(await whoami.json()).toMatchObject({ accountId: "newco", scopes: ["inference", "models"] });
    const missing = await admin.call("POST", "/v1/admin/accounts/nobody/api-keys", {});
    expect(missing.status).toBe(404);

    const keys = await admin.call("GET", "/v1/admin/api-keys?account_id=newco");
    expect(keys.status).toBe(200);
    expect(keys.body.apiKeys).toEqual([expect.objectContaining({ prefix: apiKey.prefix, name: "ci" })]);
    expect(JSON.stringify(keys.body)).not.toContain(key);
    expect((await admin.call("GET", "/v1/admin/api-keys?account_id=nobody")).status).toBe(404);

    const revoked = await admin.call("DELETE", `/v1/admin/api-keys/${apiKey.prefix}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokeTime).not.toBeNull();
    const after = await fetch(`${hearth.baseURL}/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect(after.status).toBe(401);
    expect((await admin.call("DELETE", "/v1/admin/api-keys/hth_NoSuchKey")).status).toBe(404);
  });

  it("lets an admin key make another admin", async () => {
    const issued = await admin.call("POST", "/v1/admin/accounts/member-acct/api-keys", {
      scopes: ["inference", "models", "admin"],
    });
    const res = await fetch(`${hearth.baseURL}/admin/accounts`, {
      headers: { authorization: `Bearer ${issued.body.key}` },
    });
    expect(res.status).toBe(200);
  });
});
