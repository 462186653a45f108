import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageReport } from "../../src/api/contract/management/usage-routes.js";
import { createModel } from "../../src/db/queries/models.js";
import { insertUsageRecords } from "../../src/db/queries/usage.js";
import { deploymentEvents } from "../../src/db/schema/usage.js";
import type { UsageRecord } from "../../src/domain/usage.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { json, runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";

const HOUR = 3_600_000;
/** hearth-tiny's prices; its adapters ("one") cost the same, other models what "*" says. */
const PRICES = {
  currency: "EUR",
  models: {
    "accounts/hearth/models/hearth-tiny": {
      promptPerMillion: 1000,
      cachedPerMillion: 500,
      completionPerMillion: 2000,
      perDeployedHour: 0.5,
    },
    "*": { completionPerMillion: 1 },
  },
};

/** `hearth get usage`: the real binary against a started Hearth, whose records are written directly. */
describe("hearth get usage", () => {
  let hearth: TestHearth;
  let config: Awaited<ReturnType<typeof tempConfigDir>>;
  const now = Date.now();
  const record = (requestId: string, model: string, endedAgoMs: number, completionTokens: number): UsageRecord => ({
    requestId,
    accountId: "default",
    keyId: "key-a",
    model,
    baseModelId: "hearth-tiny",
    kind: "chat",
    promptTokens: 100,
    cachedTokens: 60,
    completionTokens,
    images: 0,
    imageSteps: 0,
    imagePixels: 0,
    startedAt: now - endedAgoMs - 1000,
    endedAt: now - endedAgoMs,
    outcome: "finished",
  });

  beforeAll(async () => {
    [hearth, config] = await Promise.all([
      startTestHearth({ worker: false, env: { HEARTH_PRICES: JSON.stringify(PRICES) } }),
      tempConfigDir(),
    ]);
    await createModel(hearth.api.database.db, {
      accountId: "default",
      modelId: "one",
      kind: "lora",
      baseModel: "accounts/hearth/models/hearth-tiny",
      state: "READY",
    });
    await insertUsageRecords(hearth.api.database.db, [
      record("a", "accounts/default/models/one", 1 * HOUR, 10),
      record("b", "accounts/default/models/one", 2 * HOUR, 20),
      record("c", "accounts/hearth/models/hearth-tiny", 3 * HOUR, 5),
      record("old", "accounts/hearth/models/hearth-tiny", 10 * 24 * HOUR, 1_000),
    ]);
    // "one" deployed for 5 hours, until an hour ago; "two" for 2 hours, 40 days ago.
    await hearth.api.database.db.insert(deploymentEvents).values([
      { accountId: "default", modelId: "one", event: "deployed", at: new Date(now - 6 * HOUR) },
      { accountId: "default", modelId: "one", event: "undeployed", at: new Date(now - HOUR) },
      { accountId: "default", modelId: "two", event: "deployed", at: new Date(now - 40 * 24 * HOUR) },
      { accountId: "default", modelId: "two", event: "undeployed", at: new Date(now - 40 * 24 * HOUR + 2 * HOUR) },
    ]);
  });
  afterAll(async () => {
    await hearth?.close();
    await config?.remove();
  });
  const run = (args: string[]) =>
    runHearthCli(args, config.dir, { env: { HEARTH_API_KEY: hearth.apiKey, HEARTH_BASE_URL: hearth.url } });

  it("prints a table by model with its total, and the same numbers as JSON and as the API says", async () => {
    const shown = await run(["get", "usage", "--since", "7d"]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^Usage of account "default", .* UTC, by model:$/);
    expect(lines[1]).toMatch(/^MODEL\s+REQUESTS\s+PROMPT TOKENS\s+CACHED\s+COMPLETION TOKENS\s+IMAGES\s+COST \(EUR\)$/);
    // One: 80 prompt tokens at 1000/M, 120 cached at 500/M, 30 completion at 2000/M = 0.2; tiny: 0.075.
    expect(lines.slice(2).map((l) => l.split(/\s+/))).toEqual([
      ["accounts/default/models/one", "2", "200", "120", "30", "0", "0.2000"],
      ["accounts/hearth/models/hearth-tiny", "1", "100", "60", "5", "0", "0.0800"],
      ["TOTAL", "3", "300", "180", "35", "0", "0.2800"],
      [""],
      ["DEPLOYED", "MODEL", "HOURS", "COST", "(EUR)"],
      ["accounts/default/models/one", "5.00", "2.5000"],
      [""],
      ["Cost:", "2.7800", "EUR", "(requests", "and", "deployed", "hours)"],
    ]);
    const report = json(await run(["get", "usage", "--since", "7d", "--output", "json"])) as UsageReport;
    const res = await fetch(
      `${hearth.baseURL}/accounts/default/usage?start=${encodeURIComponent(report.startTime)}&end=${encodeURIComponent(report.endTime)}`,
      { headers: { authorization: `Bearer ${hearth.apiKey}` } },
    );
    expect(await res.json()).toEqual(report);
    expect(report.total).toMatchObject({ requests: 3, promptTokens: 300, cachedTokens: 180, completionTokens: 35 });
    expect(report.currency).toBe("EUR");
    expect(report.cost).toBeCloseTo(2.78, 3);
    expect(report.deployments).toEqual([{ model: "accounts/default/models/one", deployedHours: 5, cost: 2.5 }]);
    const earlier = json(
      await run(["get", "usage", "--since", "41d", "--until", "39d", "--output", "json"]),
    ) as UsageReport;
    // "two" is gone from the database: neither its price nor its base's is known, and "*" has no hourly one.
    expect(earlier.deployments).toEqual([
      { model: "accounts/default/models/two", deployedHours: expect.closeTo(2, 5), cost: 0 },
    ]);
  });

  it("sums by day or key over the default 30 days, and names a wrong option", async () => {
    const byKey = json(await run(["get", "usage", "--by", "key", "--output", "json"])) as UsageReport;
    expect(byKey.groups).toEqual([expect.objectContaining({ group: "key-a", requests: 4, completionTokens: 1_035 })]);
    const byDay = json(await run(["get", "usage", "--by", "day", "--output", "json"])) as UsageReport;
    expect(byDay.total.requests).toBe(4);
    expect(byDay.groups.map((g) => g.group)).toContain(new Date(now - 10 * 24 * HOUR).toISOString().slice(0, 10));
    const wrong = await run(["get", "usage", "--by", "account"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('Invalid --by "account"');
    const late = await run(["get", "usage", "--since", "yesterday"]);
    expect(late.stderr).toContain('Invalid --since "yesterday"');
  });
});
