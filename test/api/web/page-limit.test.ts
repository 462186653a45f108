import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

// The web pages' request limit (HEARTH_PAGE_REQUESTS_PER_MINUTE): per session, or per client
// address when signed out; past it, a 429 page with Retry-After. The requests come from
// 127.0.0.1, a trusted proxy here, so X-Forwarded-For gives each test an address of its own.
describe("the web pages' request limit", () => {
  const LIMIT = 5;
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_PAGE_REQUESTS_PER_MINUTE: String(LIMIT), HEARTH_TRUST_PROXY: "loopback" },
    });
  });
  afterAll(() => hearth?.close());

  const get = (path: string, headers: Record<string, string>) =>
    fetch(`${hearth.url}${path}`, { redirect: "manual", headers });

  async function expectPageRefused(res: Response) {
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/More than 5 page requests this minute\. Retry in \d+ s\./);
  }

  it("counts a signed-out visitor's pages by address, made-up session cookies included", async () => {
    const visitor = { "x-forwarded-for": "203.0.113.70" };
    for (let i = 0; i < LIMIT - 1; i++) expect((await get("/", visitor)).status).toBe(200);
    const madeUp = { ...visitor, cookie: `hearth_session=${"x".repeat(43)}` };
    expect((await get("/models", madeUp)).status).toBe(303);
    await expectPageRefused(await get("/", madeUp));
    await expectPageRefused(await get("/admin", visitor));
    expect((await get("/", { "x-forwarded-for": "203.0.113.71" })).status).toBe(200);
  });

  it("counts a signed-in visitor's pages by session, whatever the address", async () => {
    const signIn = await fetch(`${hearth.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: hearth.url,
        "x-forwarded-for": "203.0.113.80",
      },
      body: new URLSearchParams({ api_key: hearth.apiKey }),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.getSetCookie()[0]!.split(";")[0]!;
    for (let i = 0; i < LIMIT; i++) {
      const res = await get("/models", { cookie, "x-forwarded-for": `203.0.113.${81 + i}` });
      expect(res.status).toBe(200);
    }
    await expectPageRefused(await get("/models", { cookie, "x-forwarded-for": "203.0.113.90" }));
    // The address that signed in has its own window, not the session's.
    expect((await get("/", { "x-forwarded-for": "203.0.113.80" })).status).toBe(200);
  });
});
