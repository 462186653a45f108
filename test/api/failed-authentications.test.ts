import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount } from "../helpers/management.js";

/**
 * The failed-authentication limit (docs/security.md, "Client addresses"): which address it
 * counts behind trusted proxies, that a key known to be good is never refused by it, and that
 * every place a key is presented (the /v1 bearer, the sign-in form, /metrics) is behind it.
 * Every request comes from 127.0.0.1; a test's X-Forwarded-For plays the proxies in front.
 */

const WRONG_KEY = "hth_not-a-real-key-but-well-formed-0000000000";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";

/** A request as a proxy chain hands it on: `forwardedFor` is the X-Forwarded-For the last proxy sent. */
function call(hearth: TestHearth, path: string, key: string, forwardedFor: string) {
  return fetch(`${hearth.url}${path}`, {
    headers: { authorization: `Bearer ${key}`, "x-forwarded-for": forwardedFor },
  });
}

function signIn(hearth: TestHearth, key: string, forwardedFor: string) {
  return fetch(`${hearth.url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: hearth.url,
      "x-forwarded-for": forwardedFor,
    },
    body: new URLSearchParams({ api_key: key }),
  });
}

const messageOf = async (res: Response) => ((await res.json()) as { error: { message: string } }).error.message;

async function expectRefused(res: Response) {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  return res;
}

describe("failed authentications behind trusted proxies listed by address (loopback, 10.0.0.0/8)", () => {
  let hearth: TestHearth;
  let clock = Date.now();
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      // The API-key cache runs on this clock, so a test can let its entries expire.
      now: () => clock,
      env: {
        HEARTH_AUTH_FAILURES_PER_MINUTE: "3",
        HEARTH_AUTH_CACHE_TTL_MS: "60000",
        HEARTH_TRUST_PROXY: "loopback, 10.0.0.0/8",
        HEARTH_METRICS_TOKEN: METRICS_TOKEN,
      },
    });
  });
  afterAll(() => hearth?.close());

  it("counts the rightmost address that is not a trusted proxy: a forged entry neither skips nor aims the limit", async () => {
    // The attacker at 203.0.113.10 writes a new address of its own in each request; the proxies
    // (10.1.2.3, then this host) append what they saw.
    for (let i = 0; i < 3; i++) {
      const res = await call(hearth, "/v1/whoami", WRONG_KEY, `198.51.100.${i}, 203.0.113.10, 10.1.2.3`);
      expect(res.status).toBe(401);
    }
    const refused = await expectRefused(
      await call(hearth, "/v1/whoami", WRONG_KEY, "198.51.100.99, 203.0.113.10, 10.1.2.3"),
    );
    expect(await messageOf(refused)).toMatch(/Too many failed authentications from 203\.0\.113\.10 /);
    // Naming a victim's address in the header fails against the attacker's own.
    for (let i = 0; i < 3; i++) await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.50, 203.0.113.11");
    await expectRefused(await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.11"));
    expect((await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.50")).status).toBe(401);
  });

  it("never refuses a key known to be good, from a locked-out address: in this process's cache or not", async () => {
    expect((await call(hearth, "/v1/whoami", hearth.apiKey, "203.0.113.1")).status).toBe(200);
    // Someone behind the same address (a NAT) guesses keys.
    for (let i = 0; i < 3; i++) await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.30");
    await expectRefused(await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.30"));
    // Its check reused by this process: no database query, no lockout.
    expect((await call(hearth, "/v1/whoami", hearth.apiKey, "203.0.113.30")).status).toBe(200);
    // Past the cache's TTL (as for another API process): known good in Redis, so checked again.
    clock += 61_000;
    expect((await call(hearth, "/v1/whoami", hearth.apiKey, "203.0.113.30")).status).toBe(200);
    // Guesses still get no database query, nor does a key never checked before.
    await expectRefused(await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.30"));
    const fresh = await createTestAccount(hearth, "fresh-key");
    await expectRefused(await call(hearth, "/v1/whoami", fresh.apiKey, "203.0.113.30"));
    expect((await call(hearth, "/v1/whoami", fresh.apiKey, "203.0.113.31")).status).toBe(200);
    clock += 61_000;
    expect((await call(hearth, "/v1/whoami", fresh.apiKey, "203.0.113.30")).status).toBe(200);
  });

  it("puts the sign-in form behind the limit: a 429 sign-in page with Retry-After, a good key still signs in", async () => {
    for (let i = 0; i < 3; i++) expect((await signIn(hearth, WRONG_KEY, "203.0.113.40")).status).toBe(401);
    const refused = await expectRefused(await signIn(hearth, WRONG_KEY, "203.0.113.40"));
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await refused.text();
    expect(page).toContain("Sign in");
    expect(page).toMatch(/Too many failed authentications .* Retry in \d+ s\./);
    expect((await signIn(hearth, hearth.apiKey, "203.0.113.40")).status).toBe(303);
  });

  it("puts /metrics behind the limit: a wrong token counts as a failure; a JSON 429; the token still works", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await call(hearth, "/metrics", "wrong-metrics-token-000000", "203.0.113.60")).status).toBe(401);
    }
    const refused = await expectRefused(await call(hearth, "/metrics", "wrong-metrics-token-000000", "203.0.113.60"));
    expect(await refused.json()).toMatchObject({ error: { code: "rate_limited", type: "rate_limit_error" } });
    expect((await call(hearth, "/metrics", METRICS_TOKEN, "203.0.113.60")).status).toBe(200);
    expect((await call(hearth, "/metrics", hearth.apiKey, "203.0.113.60")).status).toBe(200);
  });
});

describe("failed authentications behind a number of trusted hops (2)", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_AUTH_FAILURES_PER_MINUTE: "3", HEARTH_TRUST_PROXY: "2" },
    });
  });
  afterAll(() => hearth?.close());

  it("counts the address the farther proxy saw, whatever the client wrote before it", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await call(hearth, "/v1/whoami", WRONG_KEY, `198.51.100.${i}, 203.0.113.20, 10.0.0.${i}`);
      expect(res.status).toBe(401);
    }
    await expectRefused(await call(hearth, "/v1/whoami", WRONG_KEY, "198.51.100.9, 203.0.113.20, 10.0.0.9"));
    expect((await call(hearth, "/v1/whoami", WRONG_KEY, "203.0.113.20, 203.0.113.21, 10.0.0.1")).status).toBe(401);
  });
});

describe("a peer that is not a trusted proxy (HEARTH_TRUST_PROXY=192.168.0.0/16, requests from 127.0.0.1)", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_AUTH_FAILURES_PER_MINUTE: "3", HEARTH_TRUST_PROXY: "192.168.0.0/16" },
    });
  });
  afterAll(() => hearth?.close());

  it("is believed about nothing: neither X-Forwarded-Proto nor X-Forwarded-For", async () => {
    const res = await fetch(`${hearth.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: hearth.url,
        "x-forwarded-proto": "https",
      },
      body: new URLSearchParams({ api_key: hearth.apiKey }),
    });
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie().find((c) => c.startsWith("hearth_session="))).not.toMatch(/Secure/);
    for (let i = 0; i < 3; i++) await call(hearth, "/v1/whoami", WRONG_KEY, `192.168.0.${i}`);
    const refused = await expectRefused(await call(hearth, "/v1/whoami", WRONG_KEY, "192.168.0.9"));
    expect(await messageOf(refused)).toMatch(/from 127\.0\.0\.1 /);
  });
});
