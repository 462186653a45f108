import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount } from "../../helpers/management.js";

/** A policy's directives, by name. */
function directives(policy: string | null): Map<string, string[]> {
  expect(policy).toBeTruthy();
  return new Map(
    policy!
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
}

// /admin/queues (bull-board) over HTTP with an operator's session: its page, its JSON and its
// assets carry the headers of Hearth's own pages. The board rendering under that policy, in
// Chromium, is test/api/web/browser.test.ts.
describe("the queue board's headers", () => {
  let hearth: TestHearth;
  let admin: string;
  let member: string;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
    const signIn = async (apiKey: string) => {
      const res = await fetch(`${hearth.url}/signin`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: hearth.url },
        body: new URLSearchParams({ api_key: apiKey, next: "/models" }),
      });
      return res.headers
        .getSetCookie()
        .find((c) => c.startsWith("hearth_session="))!
        .split(";")[0]!;
    };
    admin = await signIn(hearth.apiKey);
    member = await signIn((await createTestAccount(hearth, "a-member")).apiKey);
  });
  afterAll(() => hearth?.close());

  const get = (path: string, cookie = admin) => fetch(`${hearth.url}${path}`, { headers: { cookie } });

  it("the page and its JSON: Hearth's policy (inline styles added), no-store, nosniff; no Google fonts", async () => {
    const own = await get("/models");
    expect(own.status).toBe(200);
    const hearthPolicy = directives(own.headers.get("content-security-policy"));
    expect(hearthPolicy.get("frame-ancestors")).toEqual(["'none'"]);
    expect(hearthPolicy.get("script-src")).toEqual(["'self'"]);
    expect(own.headers.get("cache-control")).toBe("no-store");
    expect(own.headers.get("x-content-type-options")).toBe("nosniff");

    for (const path of [
      "/admin/queues",
      "/admin/queues/queue/anything",
      "/admin/queues/api/queues",
      "/admin/queues/api/redis/stats",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      const board = directives(res.headers.get("content-security-policy"));
      // Every directive of Hearth's pages, as strict, but inline styles.
      expect([...board.keys()]).toEqual([...hearthPolicy.keys()]);
      for (const [name, sources] of hearthPolicy) {
        expect(board.get(name), `${path} ${name}`).toEqual(
          name === "style-src" ? [...sources, "'unsafe-inline'"] : sources,
        );
      }
      const body = await res.text();
      if (path.includes("/api/")) expect(() => JSON.parse(body)).not.toThrow();
      else {
        expect(res.headers.get("content-type")).toMatch(/^text\/html/);
        expect(body).toContain('id="__UI_CONFIG__"');
        expect(body).toContain("static/js/main.");
        expect(body).not.toContain("googleapis");
      }
    }
  });

  it("its assets: nosniff and the policy's frame-ancestors, cacheable", async () => {
    const page = await (await get("/admin/queues")).text();
    const assets = [...page.matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of [
      ...assets.map((a) => `/admin/queues/${a}`),
      "/static/style.css",
      "/static/playground.js",
      "/static/batches.js",
    ]) {
      const res = await get(asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("x-content-type-options"), asset).toBe("nosniff");
      expect(directives(res.headers.get("content-security-policy")).get("frame-ancestors"), asset).toEqual(["'none'"]);
      expect(res.headers.get("cache-control"), asset).not.toBe("no-store");
      await res.arrayBuffer();
    }
  });

  it("a member's request is refused, with the same headers", async () => {
    const res = await get("/admin/queues", member);
    expect(res.status).toBe(403);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(directives(res.headers.get("content-security-policy")).get("frame-ancestors")).toEqual(["'none'"]);
  });
});
