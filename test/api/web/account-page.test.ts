import path from "node:path";
import { and, eq } from "drizzle-orm";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageReport } from "../../../src/api/contract/management/usage-routes.js";
import { issueApiKey } from "../../../src/auth/api-keys.js";
import { insertUsageRecords } from "../../../src/db/queries/usage.js";
import { apiKeys } from "../../../src/db/schema/api-keys.js";
import type { UsageRecord } from "../../../src/domain/usage.js";
import { launchChromium, SCREENSHOT_DIR } from "../../helpers/browser.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, type Management } from "../../helpers/management.js";

const DAY = 86_400_000;
const TINY = "accounts/hearth/models/hearth-tiny";
const LORA = "accounts/metered/models/my-lora";
const PRICES = {
  currency: "USD",
  models: { [TINY]: { promptPerMillion: 1, cachedPerMillion: 0.5, completionPerMillion: 2 } },
};

/** `n` records of one model on the day `daysAgo` days before today (UTC noon), each of `tokens`. */
function records(account: string, model: string, daysAgo: number, n: number, tokens: [number, number, number]) {
  const at = Math.floor(Date.now() / DAY) * DAY - daysAgo * DAY + DAY / 2;
  return Array.from(
    { length: n },
    (_, i): UsageRecord => ({
      requestId: `${account}-${model}-${daysAgo}-${i}`,
      accountId: account,
      keyId: "a-key",
      model,
      baseModelId: "hearth-tiny",
      ...(model === LORA ? { adapter: "my-lora" } : {}),
      kind: "completion",
      promptTokens: tokens[0],
      cachedTokens: tokens[1],
      completionTokens: tokens[2],
      images: 0,
      imageSteps: 0,
      imagePixels: 0,
      startedAt: at - 1000 - i,
      endedAt: at - i,
      outcome: "finished",
    }),
  );
}

// The account page and the operators' per-account view in a real browser (Debian's Chromium):
// the usage chart's figures against the API's, keys made, used and revoked through the page,
// and who may do what (docs/web.md, docs/security.md).
describe("the account page in Chromium", () => {
  let hearth: TestHearth;
  let browser: Browser;
  let metered: Management;

  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_AUTH_CACHE_TTL_MS: "0", HEARTH_PRICES: JSON.stringify(PRICES) },
    });
    metered = await createTestAccount(hearth, "metered");
    await createTestAccount(hearth, "quiet-neighbour");
    await insertUsageRecords(hearth.api.database.db, [
      ...records("metered", TINY, 1, 3, [120, 20, 40]),
      ...records("metered", LORA, 1, 2, [50, 0, 300]),
      ...records("metered", TINY, 3, 1, [1_000, 500, 2_000]),
      ...records("metered", LORA, 6, 4, [10, 5, 7]),
      // Outside the last 30 days, within the last 90.
      ...records("metered", TINY, 45, 2, [9_000, 0, 1_000]),
      // Another account's: never on this one's page.
      ...records("quiet-neighbour", TINY, 2, 5, [77, 0, 77]),
    ]);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await hearth?.close();
  });

  async function signedIn(key: string, viewport?: { width: number; height: number }) {
    const context = await browser.newContext(viewport ? { viewport } : {});
    const page = await context.newPage();
    await page.goto(`${hearth.url}/`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/models$/);
    return { context, page };
  }

  async function usageApi(key: string, account: string, query: Record<string, string>): Promise<UsageReport> {
    const res = await fetch(`${hearth.url}/v1/accounts/${account}/usage?${new URLSearchParams(query)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as UsageReport;
  }

  /** The page's period, as the <time> elements give it. */
  async function periodOf(page: Page) {
    const times = page.locator(".usage-period time");
    return {
      start: (await times.nth(0).getAttribute("datetime"))!,
      end: (await times.nth(1).getAttribute("datetime"))!,
    };
  }

  /** The chart's table: each row's day and model, then its figures (counts and cost) as their `<data>` values. */
  async function figures(page: Page) {
    const table = page.locator("table", { has: page.locator("caption", { hasText: "Each day's usage by model" }) });
    const rows: (string | number)[][] = [];
    for (const row of await table.locator("tbody tr").all()) {
      const [day, model] = await row.locator("td").allTextContents();
      rows.push([day!, model!, ...(await values(row.locator("td data")))]);
    }
    return rows;
  }

  /** The figures of `<data>` elements, by their machine-readable value. */
  async function values(elements: Locator) {
    const found: number[] = [];
    for (const element of await elements.all()) found.push(Number(await element.getAttribute("value")));
    return found;
  }

  /** The API's day-by-model groups as the table's rows. */
  const asRows = (report: UsageReport) =>
    report.groups.map((g) => [
      g.day,
      g.model,
      g.requests,
      g.promptTokens,
      g.cachedTokens,
      g.completionTokens,
      g.images,
      g.cost!,
    ]);

  it("draws tokens per day per model, and its table holds the API's figures for each period", async () => {
    const { context, page } = await signedIn(metered.apiKey);
    await page.getByRole("link", { name: "Account", exact: true }).click();
    expect(new URL(page.url()).pathname).toBe("/account");

    for (const days of [30, 7, 90]) {
      if (days !== 30) await page.getByRole("link", { name: `${days} days` }).click();
      const period = await periodOf(page);
      expect(Date.parse(period.end) - Date.parse(period.start)).toBe(days * DAY);
      const api = await usageApi(metered.apiKey, "metered", { ...period, groupBy: "day_model" });
      const rows = await figures(page);
      expect(rows).toEqual(asRows(api));
      expect(rows.length).toBe(days === 90 ? 5 : 4);

      // The chart: one bar part a day and model, each titled with the API's tokens; a legend per model.
      const chart = page.getByRole("img", { name: "Tokens per day per model" });
      const parts = await chart.locator("rect title").allTextContents();
      expect(parts).toEqual(
        api.groups.map(
          (g) => `${g.day} · ${g.model}: ${(g.promptTokens + g.completionTokens).toLocaleString("en-US")} tokens`,
        ),
      );
      const models = [...new Set(api.groups.map((g) => g.model!))].sort();
      expect(await page.locator(".legend li").allTextContents()).toEqual(models);
      expect(await chart.locator("desc").textContent()).toContain(`${models.length} models`);

      // The totals, and costs at the operator's prices; the API by model agrees too.
      const byModel = await usageApi(metered.apiKey, "metered", { ...period, groupBy: "model" });
      // (The costs summed in another order: equal but for the last bits of a double.)
      const { cost: modelsCost, ...modelsCounts } = byModel.total;
      const { cost: daysCost, ...daysCounts } = api.total;
      expect(modelsCounts).toEqual(daysCounts);
      expect(modelsCost).toBeCloseTo(daysCost!, 12);
      const t = api.total;
      expect((await values(page.locator("dl.totals dd data"))).slice(0, 5)).toEqual([
        t.requests,
        t.promptTokens,
        t.cachedTokens,
        t.completionTokens,
        t.images,
      ]);
      expect(await values(page.locator("dl.totals dd").nth(4).locator("data"))).toEqual([api.cost]);
      expect(api.cost).toBeGreaterThan(0);
      if (days === 30) await page.screenshot({ path: path.join(SCREENSHOT_DIR, "account.png"), fullPage: true });
    }
    // None of the neighbour's usage.
    expect(await page.locator("main").textContent()).not.toContain("quiet-neighbour");
    await context.close();

    // On a phone: nothing wider than the screen.
    const phone = await signedIn(metered.apiKey, { width: 390, height: 844 });
    await phone.page.goto(`${hearth.url}/account`);
    expect(await phone.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await phone.page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-account.png"), fullPage: true });
    await phone.context.close();
  }, 60_000);

  it("creates a key shown once that works, lists it, and revokes it after asking", async () => {
    const { context, page } = await signedIn(metered.apiKey);
    await page.goto(`${hearth.url}/account`);
    await page.getByLabel("Name").fill("from-the-page");
    await page.getByRole("checkbox", { name: "models" }).uncheck();
    await page.getByLabel("Expires").selectOption("30");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Key created");
    const key = await page.locator("#new-key").inputValue();
    expect(key).toMatch(/^hth_/);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "key-created.png"), fullPage: true });
    const whoami = await fetch(`${hearth.url}/v1/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect(await whoami.json()).toMatchObject({ accountId: "metered", scopes: ["inference"] });
    const models = () => fetch(`${hearth.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect((await models()).status).toBe(200);

    // Listed by its prefix, never shown again; it expires in 30 days.
    const prefix = key.slice(0, 12);
    await page.goto(`${hearth.url}/account`);
    expect(await page.content()).not.toContain(key);
    const row = page.locator("tr", { has: page.locator("code", { hasText: prefix }) });
    const cells = await row.locator("td").allTextContents();
    expect(cells.slice(1, 3)).toEqual(["from-the-page", "inference"]);
    expect(cells[5]).toMatch(new RegExp(`^${new Date(Date.now() + 30 * DAY).toISOString().slice(0, 10)} `));
    expect(cells[6]).toBe("active");

    await page.getByRole("link", { name: `Revoke ${prefix}` }).click();
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(`Revoke ${prefix}?`);
    await page.getByRole("button", { name: "Revoke key" }).click();
    expect(new URL(page.url()).pathname).toBe("/account");
    await expect(page.getByRole("status").textContent()).resolves.toBe(`Key ${prefix} revoked.`);
    expect((await row.locator("td").allTextContents())[6]).toBe("revoked");
    expect((await models()).status).toBe(401);
    await context.close();
  }, 60_000);

  it("refuses keys to an inference-only session, a stronger key to any, and a form from elsewhere", async () => {
    const db = hearth.api.database.db;
    const frontEnd = await issueApiKey(db, { accountId: "metered", name: "front-end", scopes: ["inference"] });
    const keysNamed = async (name: string) =>
      db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, "metered"), eq(apiKeys.name, name)));

    const post = async (page: Page, form: Record<string, string>, origin = hearth.url) => {
      const csrf = (await page.locator('meta[name="hearth-csrf"]').getAttribute("content"))!;
      const res = await page.request.post(`${hearth.url}/account/keys`, {
        form: { csrf, name: "forged", expires: "never", ...form },
        headers: { origin },
        maxRedirects: 0,
      });
      return { status: res.status(), text: await res.text() };
    };

    // The inference-only session sees the page, and why it shows neither usage nor keys.
    const inference = await signedIn(frontEnd.key);
    await inference.page.goto(`${hearth.url}/account`);
    const notices = await inference.page.locator(".notice").allTextContents();
    expect(notices).toEqual([
      "Reading usage needs a key with the models or the admin scope; this key has inference.",
      "Managing API keys needs a key with the models scope; this key has inference.",
    ]);
    expect(await inference.page.getByRole("button", { name: "Create key" }).count()).toBe(0);
    const refused = await post(inference.page, { scopes: "inference" });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("Managing API keys needs a key with the models scope");
    await inference.context.close();

    // A member's session asks for admin: refused in words, on the page.
    const member = await signedIn(metered.apiKey);
    await member.page.goto(`${hearth.url}/account`);
    expect(await member.page.getByRole("checkbox", { name: "admin" }).count()).toBe(0);
    const stronger = await post(member.page, { scopes: "admin" });
    expect(stronger.status).toBe(403);
    expect(stronger.text).toContain("A key can only make keys with scopes it has itself: this one lacks admin.");
    // No token, or another site's origin: refused.
    const noToken = await member.page.request.post(`${hearth.url}/account/keys`, {
      form: { name: "forged", scopes: "inference", expires: "never" },
      headers: { origin: hearth.url },
    });
    expect(noToken.status()).toBe(403);
    expect(await noToken.text()).toContain("The form was not Hearth&#39;s own.");
    expect((await post(member.page, { scopes: "inference" }, "https://evil.example")).status).toBe(403);
    expect(await keysNamed("forged")).toEqual([]);
    await member.context.close();
  }, 60_000);

  it("ends the session that revokes its own key", async () => {
    const own = await issueApiKey(hearth.api.database.db, { accountId: "metered", name: "mine", scopes: ["models"] });
    const { context, page } = await signedIn(own.key);
    await page.goto(`${hearth.url}/account`);
    const prefix = own.key.slice(0, 12);
    await page.getByRole("link", { name: `Revoke ${prefix}` }).click();
    await expect(page.locator(".notice").textContent()).resolves.toContain("revoking it signs you out");
    await page.getByRole("button", { name: "Revoke key" }).click();
    // Back to sign in (and to the account page after).
    expect(new URL(page.url()).pathname).toBe("/");
    expect(new URL(page.url()).searchParams.get("next")).toBe("/account");
    await page.goto(`${hearth.url}/models`);
    expect(new URL(page.url()).pathname).toBe("/");
    await context.close();
  }, 60_000);

  it("shows operators every account's recent tokens and any account's usage and keys; a member gets 403", async () => {
    const { context, page } = await signedIn(hearth.apiKey);
    await page.goto(`${hearth.url}/admin`);
    const accounts = page.locator("section", { has: page.getByRole("heading", { name: /^Accounts/ }) });
    const row = accounts.locator("tr", { has: page.getByRole("link", { name: "metered", exact: true }) });
    const tomorrow = Math.floor(Date.now() / DAY) * DAY + DAY;
    const last30 = await usageApi(hearth.apiKey, "metered", {
      start: new Date(tomorrow - 30 * DAY).toISOString(),
      end: new Date(tomorrow).toISOString(),
    });
    expect(await values(row.locator("td data"))).toEqual([
      last30.total.requests,
      last30.total.promptTokens + last30.total.completionTokens,
      last30.total.images,
    ]);

    await row.getByRole("link", { name: "metered" }).click();
    expect(new URL(page.url()).pathname).toBe("/admin/accounts/metered");
    const api = await usageApi(hearth.apiKey, "metered", { ...(await periodOf(page)), groupBy: "day_model" });
    expect(await figures(page)).toEqual(asRows(api));
    expect(api.groups.length).toBeGreaterThan(0);
    await expect(page.locator("main").textContent()).resolves.toContain(metered.apiKey.slice(0, 12));
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "admin-account.png"), fullPage: true });

    // An operator may revoke any account's key from here.
    const spare = await issueApiKey(hearth.api.database.db, {
      accountId: "metered",
      name: "spare",
      scopes: ["inference"],
    });
    await page.reload();
    await page.getByRole("link", { name: `Revoke ${spare.key.slice(0, 12)}` }).click();
    await page.getByRole("button", { name: "Revoke key" }).click();
    expect(new URL(page.url()).pathname).toBe("/admin/accounts/metered");
    const spareUse = await fetch(`${hearth.url}/v1/models`, { headers: { authorization: `Bearer ${spare.key}` } });
    expect(spareUse.status).toBe(401);
    expect((await page.goto(`${hearth.url}/admin/accounts/nobody-here`))?.status()).toBe(404);
    await context.close();

    const member = await signedIn(metered.apiKey);
    const refused = await member.page.goto(`${hearth.url}/admin/accounts/quiet-neighbour`);
    expect(refused?.status()).toBe(403);
    await expect(member.page.locator("main").textContent()).resolves.toContain("admin scope");
    await member.context.close();
  }, 60_000);
});
