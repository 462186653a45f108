import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageReport } from "../../src/api/contract/management/usage-routes.js";
import { dailyPeriod } from "../../src/api/web/usage-section.js";
import { apiKeys } from "../../src/db/schema/api-keys.js";
import { insertUsageRecords } from "../../src/db/queries/usage.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { json, runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";

const DAY = 86_400_000;
const COUNTED = ["requests", "promptTokens", "cachedTokens", "completionTokens", "images"] as const;
type Counts = Record<(typeof COUNTED)[number], number>;

/**
 * One period's usage read the four ways a person or a billing system reads it: the API's
 * report, the records' export, `hearth get usage` and the account page. They agree to the token
 * (docs/usage.md, "Reading it"). The records are written straight to the database: a few hundred
 * over a week, two models, two keys, every outcome.
 */
describe("usage read four ways", () => {
  let hearth: TestHearth;
  let config: Awaited<ReturnType<typeof tempConfigDir>>;
  const now = Date.now();
  const { start, end } = dailyPeriod(7, now);

  beforeAll(async () => {
    [hearth, config] = await Promise.all([startTestHearth({ worker: false }), tempConfigDir()]);
    const db = hearth.api.database.db;
    const [key] = await db.select().from(apiKeys).where(eq(apiKeys.accountId, "default"));
    const records: UsageRecord[] = Array.from({ length: 300 }, (_, i) => {
      // Spread over the last 8 days, so that some fall before the page's 7 whole days.
      const endedAt = Math.floor(now - ((i * 7_919) % 8) * DAY - (i % 1_000) * 60_000);
      const promptTokens = 3 + ((i * 37) % 400);
      return {
        requestId: `agree-${i}`,
        accountId: "default",
        keyId: i % 3 === 0 ? "another-key" : key!.id,
        model: i % 2 === 0 ? "accounts/hearth/models/hearth-tiny" : "accounts/default/models/my-lora",
        baseModelId: "hearth-tiny",
        kind: "chat",
        promptTokens,
        cachedTokens: i % 5 === 0 ? Math.floor(promptTokens / 2) : 0,
        completionTokens: (i * 13) % 257,
        images: 0,
        imageSteps: 0,
        imagePixels: 0,
        startedAt: endedAt - 500,
        endedAt,
        outcome: (["finished", "cancelled", "failed"] as const)[i % 3]!,
      };
    });
    await insertUsageRecords(db, records);
  });
  afterAll(async () => {
    await hearth?.close();
    await config?.remove();
  });

  it("answers the same totals from the API, the export, the CLI and the account page", async () => {
    const auth = { authorization: `Bearer ${hearth.apiKey}` };
    const query = `start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`;

    const report = (await (
      await fetch(`${hearth.baseURL}/accounts/default/usage?${query}`, { headers: auth })
    ).json()) as UsageReport;
    const api = pick(report.total);
    expect(api.requests).toBeGreaterThan(200);

    const exported = (
      await (await fetch(`${hearth.baseURL}/accounts/default/usage/records?${query}`, { headers: auth })).text()
    )
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Counts);
    const fromExport: Counts = {
      requests: exported.length,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      images: 0,
    };
    for (const r of exported) for (const k of COUNTED.slice(1)) fromExport[k] += r[k];

    const cli = await runHearthCli(["get", "usage", "--since", start, "--until", end, "--output", "json"], config.dir, {
      env: { HEARTH_API_KEY: hearth.apiKey, HEARTH_BASE_URL: hearth.url },
    });
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = pick((json(cli) as UsageReport).total);

    const page = await accountPage(hearth, 7);
    const fromPage = {
      requests: figure(page, "Requests"),
      promptTokens: figure(page, "Prompt tokens"),
      cachedTokens: Number(/<data value="(\d+)">[^<]*<\/data>\s*of them cached/.exec(page)?.[1] ?? Number.NaN),
      completionTokens: figure(page, "Completion tokens"),
      images: figure(page, "Images"),
    };

    expect({ export: fromExport, cli: fromCli, page: fromPage }).toEqual({ export: api, cli: api, page: api });
  });
});

function pick(total: Counts): Counts {
  return Object.fromEntries(COUNTED.map((k) => [k, total[k]])) as Counts;
}

/** A total on the account page: the figure after its label in the totals list. */
function figure(page: string, label: string): number {
  const totals = /<dl class="facts totals">([\s\S]*?)<\/dl>/.exec(page)?.[1] ?? "";
  const match = new RegExp(`<dt>${label}</dt>\\s*<dd>\\s*<data value="(\\d+)"`).exec(totals);
  return match ? Number(match[1]) : Number.NaN;
}

/** The account page as its signed-in user sees it, for the last `days` whole days. */
async function accountPage(hearth: TestHearth, days: number): Promise<string> {
  const signin = await fetch(`${hearth.url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: hearth.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ api_key: hearth.apiKey }),
  });
  const cookie = signin.headers.get("set-cookie")?.split(";")[0];
  expect(cookie).toBeDefined();
  const res = await fetch(`${hearth.url}/account?days=${days}`, { headers: { cookie: cookie! } });
  expect(res.status).toBe(200);
  return res.text();
}
