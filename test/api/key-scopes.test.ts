import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { contractRoutes } from "../../src/api/contract/document.js";
import { issueApiKey } from "../../src/auth/api-keys.js";
import { API_KEY_SCOPES, type ApiKeyScope } from "../../src/domain/vocabulary.js";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { spawnApi } from "../helpers/api-process.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, defaultAccount, management, type Management } from "../helpers/management.js";

/** Every authenticated operation of the contract with the scope it declares, its path filled in. */
const scoped = contractRoutes
  .filter((r) => r.scope !== "public" && r.scope !== "any")
  .map((r) => ({
    scope: r.scope as ApiKeyScope,
    method: r.method.toUpperCase(),
    path: r.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "file_name" ? "adapter.gguf" : `scoped-${name}`)),
  }));

describe("scoped keys", () => {
  let hearth: TestHearth;
  let admin: Management;
  /** One key per scope left out: it has the other two. */
  const without = new Map<ApiKeyScope, Management>();
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } });
    admin = defaultAccount(hearth);
    const db = hearth.api.database.db;
    for (const scope of API_KEY_SCOPES) {
      const scopes = API_KEY_SCOPES.filter((s) => s !== scope);
      const { key } = await issueApiKey(db, { accountId: "default", name: `no-${scope}`, scopes });
      without.set(scope, management(hearth, "default", key));
    }
  });
  afterAll(() => hearth?.close());

  it("declares a scope on every operation that changes or generates anything", () => {
    const count = (scope: ApiKeyScope) => scoped.filter((r) => r.scope === scope).length;
    expect(count("inference")).toBe(17); // completions, chat, embeddings, streams, 3 image endpoints, OpenAI's images; files: 5; batches: 4
    expect(count("models")).toBe(11); // models, files, lifecycle: 8; the account's API keys: 3
    expect(count("admin")).toBe(6);
  });

  it("refuses, on every such operation, a key without its scope: 403 before the request is read", async () => {
    for (const { scope, method, path } of scoped) {
      const reply = await without
        .get(scope)!
        .call(method, path, method === "GET" || method === "DELETE" ? undefined : {});
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error, `${method} ${path}`).toMatchObject({
        code: "forbidden",
        type: "permission_error",
        message: expect.stringContaining(`needs a key with the ${scope} scope`),
      });
    }
  });

  it("lets each key do what its scopes allow, and every key read its account and the models", async () => {
    const inferenceOnly = await createTestAccount(hearth, "front-end", { scopes: ["inference"] });
    const modelsOnly = await createTestAccount(hearth, "pipeline", { scopes: ["models"] });
    const complete = (who: Management) =>
      who.call("POST", "/v1/completions", { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 2 });
    expect((await complete(inferenceOnly)).status).toBe(200);
    expect((await complete(modelsOnly)).status).toBe(403);
    // A leaked front-end key cannot upload, deploy or delete.
    expect((await inferenceOnly.createModel("leaked")).status).toBe(403);
    expect((await modelsOnly.createModel("built")).status).toBe(201);
    expect((await inferenceOnly.call("DELETE", "/v1/accounts/pipeline/models/built")).status).toBe(403);
    for (const who of [inferenceOnly, modelsOnly]) {
      expect((await who.call("GET", "/v1/whoami")).status).toBe(200);
      expect((await who.call("GET", "/v1/models")).status).toBe(200);
      expect((await who.call("GET", `/v1/accounts/${who.accountId}/models`)).status).toBe(200);
    }
    expect((await inferenceOnly.call("GET", "/v1/whoami")).body).toMatchObject({ scopes: ["inference"] });
  });

  it("issues scoped, expiring keys through the admin API; an expired key is refused", async () => {
    const expireTime = new Date(Date.now() + 3_600_000).toISOString();
    const issued = await admin.call("POST", "/v1/admin/accounts/default/api-keys", {
      name: "temp",
      scopes: ["inference"],
      expireTime,
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.apiKey).toMatchObject({ scopes: ["inference"], expireTime, lastUseTime: null });
    const temp = management(hearth, "default", issued.body.key);
    expect((await temp.call("GET", "/v1/whoami")).status).toBe(200);
    const listed = await admin.call("GET", "/v1/admin/api-keys?account_id=default");
    const row = listed.body.apiKeys.find((k: { prefix: string }) => k.prefix === issued.body.apiKey.prefix);
    expect(row).toMatchObject({ scopes: ["inference"], expireTime });
    expect(row.lastUseTime).not.toBeNull();

    await hearth.api.database.db.execute(
      `update api_keys set expires_at = now() - interval '1 second' where prefix = '${issued.body.apiKey.prefix}'`,
    );
    const expired = await temp.call("GET", "/v1/whoami");
    expect(expired.status).toBe(401);

    for (const [body, param] of [
      [{ scopes: [] }, "scopes"],
      [{ scopes: ["root"] }, "scopes[0]"],
      [{ expireTime: "tomorrow" }, "expireTime"],
      [{ expireTime: "2001-01-01T00:00:00Z" }, "expireTime"],
    ] as const) {
      const bad = await admin.call("POST", "/v1/admin/accounts/default/api-keys", body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.param).toBe(param);
    }
  });

  it("makes no key for the built-in account, which holds the operator's base models", async () => {
    const refused = await admin.call("POST", "/v1/admin/accounts/hearth/api-keys", { scopes: ["models"] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('No API key can be made for the built-in account "hearth".');
    // Nor can the database hold one, whatever writes it.
    const planted = await hearth.api.database.db
      .execute(
        "insert into api_keys (account_id, name, scopes, prefix, hash) values ('hearth', 'x', '{models}', 'hth_builtin0', repeat('a', 64))",
      )
      .catch((e: unknown) => e as Error);
    expect(String((planted as Error).cause)).toMatch(/api_keys_not_builtin/);
  });
});

describe("a revoked key, with two API processes", () => {
  const TTL_MS = 1_500;
  let hearth: TestHearth;
  let dataDir: string;
  let other: { child: HearthChild; url: string };
  beforeAll(async () => {
    hearth = await startTestHearth({
      backend: "postgres",
      worker: false,
      env: { HEARTH_AUTH_CACHE_TTL_MS: String(TTL_MS) },
    });
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-revoke-"));
    other = await spawnApi(hearth, dataDir, { HEARTH_AUTH_CACHE_TTL_MS: String(TTL_MS) });
  }, 90_000);
  afterAll(async () => {
    await other?.child.stop(5_000);
    await hearth?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("stops working on every API process within the auth cache TTL", async () => {
    const admin = defaultAccount(hearth);
    const issued = await admin.call("POST", "/v1/admin/accounts/default/api-keys", { scopes: ["inference"] });
    const whoami = (url: string) =>
      fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${issued.body.key}` } }).then((r) => r.status);
    // Both processes have checked the key, and reuse that check for up to the TTL.
    expect(await whoami(hearth.url)).toBe(200);
    expect(await whoami(other.url)).toBe(200);

    const revoked = await admin.call("DELETE", `/v1/admin/api-keys/${issued.body.apiKey.prefix}`);
    expect(revoked.status).toBe(200);
    const at = Date.now();
    // The process that revoked it forgets it at once; the other within the TTL.
    expect(await whoami(hearth.url)).toBe(401);
    await eventually(async () => expect(await whoami(other.url)).toBe(401), TTL_MS + 3_000);
    const after = Date.now() - at;
    console.log(`the other API process refused the revoked key ${after} ms after the revocation (TTL ${TTL_MS} ms)`);
    expect(after).toBeLessThan(TTL_MS + 1_000);
  }, 60_000);

  it("counts an account's requests per minute across both processes (the windows are in Redis)", async () => {
    const shared = await createTestAccount(hearth, "shared");
    const patched = await defaultAccount(hearth).call("PATCH", "/v1/admin/accounts/shared", {
      limits: { requestsPerMinute: 4 },
    });
    expect(patched.status).toBe(200);
    const whoami = (url: string) =>
      fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${shared.apiKey}` } });
    for (const url of [hearth.url, other.url, hearth.url, other.url]) expect((await whoami(url)).status).toBe(200);
    const fifth = await whoami(other.url);
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect((await whoami(hearth.url)).status).toBe(429);
  });
});
