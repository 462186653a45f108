import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, type Management } from "../../helpers/management.js";

/** A browser's cookie jar, as far as these tests need one: the session cookie. */
function cookieOf(res: Response): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith("hearth_session="));
}

// The pages' sessions over plain HTTP: signing in and out, the cookie's flags, and how a
// cookie may (and may not) call the JSON API. The browser itself is test/api/web/browser.test.ts.
describe("web sessions", () => {
  let hearth: TestHearth;
  let other: Management;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_AUTH_CACHE_TTL_MS: "0", HEARTH_TRUST_PROXY: "true" },
    });
    other = await createTestAccount(hearth, "other-acct");
    await other.createModel("private-model");
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const signIn = (apiKey: string, headers: Record<string, string> = {}) =>
    fetch(`${hearth.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: hearth.url, ...headers },
      body: new URLSearchParams({ api_key: apiKey, next: "/accounts/hearth/models/hearth-tiny" }),
    });
  const session = async () => {
    const res = await signIn(hearth.apiKey);
    const cookie = cookieOf(res)!.split(";")[0]!;
    const page = await (await fetch(`${hearth.url}/models`, { headers: { cookie } })).text();
    const csrf = /name="hearth-csrf" content="([^"]+)"/.exec(page)![1]!;
    return { cookie, csrf };
  };

  it("sends signed-out visitors to sign in, and a wrong key gets a message on the page", async () => {
    const models = await fetch(`${hearth.url}/models`, { redirect: "manual" });
    expect(models.status).toBe(303);
    expect(models.headers.get("location")).toBe("/?next=%2Fmodels");
    const wrong = await signIn("hth_not_a_real_key_at_all_000000000000000");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That API key is not valid");
    expect(cookieOf(wrong)).toBeUndefined();
  });

  it("signs in with a key: an HttpOnly, SameSite=Lax cookie (Secure behind a TLS proxy), and back to where one was going", async () => {
    const res = await signIn(hearth.apiKey);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/accounts/hearth/models/hearth-tiny");
    const cookie = cookieOf(res)!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).not.toContain(hearth.apiKey);
    const proxied = cookieOf(await signIn(hearth.apiKey, { "x-forwarded-proto": "https" }))!;
    expect(proxied).toMatch(/Secure/);
  });

  it("refuses a sign-in form posted from another site", async () => {
    const res = await signIn(hearth.apiKey, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(cookieOf(res)).toBeUndefined();
  });

  it("lets the cookie call the JSON API only with the page's CSRF token", async () => {
    const { cookie, csrf } = await session();
    const without = await fetch(`${hearth.baseURL}/whoami`, { headers: { cookie } });
    expect(without.status).toBe(403);
    expect(await without.json()).toMatchObject({ error: { code: "forbidden" } });
    const wrong = await fetch(`${hearth.baseURL}/whoami`, { headers: { cookie, "x-hearth-csrf": `${csrf}x` } });
    expect(wrong.status).toBe(403);
    const right = await fetch(`${hearth.baseURL}/whoami`, { headers: { cookie, "x-hearth-csrf": csrf } });
    expect(right.status).toBe(200);
    expect(await right.json()).toMatchObject({ accountId: "default", scopes: ["inference", "models", "admin"] });
  });

  it("shows another account's model as 404, exactly as a missing one", async () => {
    const { cookie } = await session();
    const theirs = await fetch(`${hearth.url}/accounts/other-acct/models/private-model`, { headers: { cookie } });
    const missing = await fetch(`${hearth.url}/accounts/other-acct/models/no-such-model`, { headers: { cookie } });
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    const message = (page: string) => /<p>([^<]*)<\/p>/.exec(page)![1]!;
    expect(message(await theirs.text()).replace("private-model", "X")).toBe(
      message(await missing.text()).replace("no-such-model", "X"),
    );
    const base = await fetch(`${hearth.url}/accounts/hearth/models/hearth-tiny`, { headers: { cookie } });
    expect(base.status).toBe(200);
    expect(base.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  it("signs out: the session is gone, for the pages and for the API", async () => {
    const { cookie, csrf } = await session();
    const refused = await fetch(`${hearth.url}/signout`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: hearth.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: "not-the-token" }),
    });
    expect(refused.status).toBe(403);
    const out = await fetch(`${hearth.url}/signout`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: hearth.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf }),
    });
    expect(out.status).toBe(303);
    expect(cookieOf(out)).toMatch(/Max-Age=0/);
    expect((await fetch(`${hearth.url}/models`, { headers: { cookie }, redirect: "manual" })).status).toBe(303);
    const api = await fetch(`${hearth.baseURL}/whoami`, { headers: { cookie, "x-hearth-csrf": csrf } });
    expect(api.status).toBe(401);
  });

  it("ends a session whose key is revoked", async () => {
    const member = await createTestAccount(hearth, "revoked-acct");
    const res = await signIn(member.apiKey);
    const cookie = cookieOf(res)!.split(";")[0]!;
    expect((await fetch(`${hearth.url}/models`, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    const keys = await fetch(`${hearth.baseURL}/admin/api-keys?account_id=revoked-acct`, {
      headers: { authorization: `Bearer ${hearth.apiKey}` },
    });
    const { prefix } = ((await keys.json()) as { apiKeys: { prefix: string }[] }).apiKeys[0]!;
    await fetch(`${hearth.baseURL}/admin/api-keys/${prefix}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${hearth.apiKey}` },
    });
    expect((await fetch(`${hearth.url}/models`, { headers: { cookie }, redirect: "manual" })).status).toBe(303);
  });
});
