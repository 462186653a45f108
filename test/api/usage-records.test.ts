import OpenAI from "openai";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageReport } from "../../src/api/contract/management/usage-routes.js";
import { issueApiKey } from "../../src/auth/api-keys.js";
import { apiKeys } from "../../src/db/schema/api-keys.js";
import { insertUsageRecords } from "../../src/db/queries/usage.js";
import { usageRecords, type UsageRow } from "../../src/db/schema/usage.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { recordOf as recordOfIn } from "../helpers/usage.js";
import { createTestAccount } from "../helpers/management.js";

const TINY = "accounts/hearth/models/hearth-tiny";

// Usage records end to end: requests through the API to a real worker (node-llama-cpp,
// hearth-sketch), their records through the usage log to the database, each equal to what the
// client was told it used.
describe("usage records", () => {
  let hearth: TestHearth;
  let client: OpenAI;
  let keyId: string;

  beforeAll(async () => {
    hearth = await startTestHearth();
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
    const [key] = await hearth.api.database.db.select().from(apiKeys).where(eq(apiKeys.accountId, "default"));
    keyId = key!.id;
  });
  afterAll(() => hearth?.close());

  const recordOf = (requestId: string) => recordOfIn(hearth, requestId);

  it("records a completion and a streamed chat as their usage said, cached tokens apart", async () => {
    const started = Date.now();
    const { data, response } = await client.completions
      .create({ model: TINY, prompt: "The hearth keeps ", max_tokens: 12, temperature: 0 })
      .withResponse();
    const completion = await recordOf(response.headers.get("x-request-id")!);
    expect(completion).toMatchObject({
      accountId: "default",
      keyId,
      model: TINY,
      baseModelId: "hearth-tiny",
      adapter: null,
      kind: "completion",
      promptTokens: data.usage!.prompt_tokens,
      cachedTokens: data.usage!.prompt_tokens_details!.cached_tokens,
      completionTokens: data.usage!.completion_tokens,
      images: 0,
      outcome: "finished",
    });
    expect(completion.startedAt.getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect(completion.endedAt.getTime()).toBeGreaterThanOrEqual(completion.startedAt.getTime());

    // The same prompt again, streamed as a chat: it reuses cells, and the record says how many.
    const { data: stream, response: streamed } = await client.chat.completions
      .create({
        model: TINY,
        messages: [{ role: "user", content: "The hearth keeps the house warm all winter long" }],
        max_tokens: 8,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const chat = await recordOf(streamed.headers.get("x-request-id")!);
    expect(chat).toMatchObject({
      kind: "chat",
      promptTokens: usage!.prompt_tokens,
      cachedTokens: usage!.prompt_tokens_details!.cached_tokens,
      completionTokens: usage!.completion_tokens,
      outcome: "finished",
    });
  });

  it("records what a request cancelled by its client produced", async () => {
    const { data: stream, response } = await client.completions
      // Eight long choices: longer than the grace a left stream runs on for its resumption.
      .create({ model: TINY, prompt: "Once ", max_tokens: 500, n: 8, temperature: 0, stream: true })
      .withResponse();
    // The client reads five chunks and leaves: the API cancels the job, which stops within a token.
    let received = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.text) received++;
      if (received === 5) break;
    }
    const record = await recordOf(response.headers.get("x-request-id")!);
    expect(record.outcome).toBe("cancelled");
    // hearth-tiny reads and writes a token a byte: at least what the client got, short of all asked.
    expect(record.completionTokens).toBeGreaterThanOrEqual(5);
    expect(record.completionTokens).toBeLessThan(8 * 500);
  });

  it("records embeddings' tokens and images' count, steps and pixels", async () => {
    const { data, response } = await client.embeddings
      .create({ model: TINY, input: ["one fire", "two embers"] })
      .withResponse();
    expect(await recordOf(response.headers.get("x-request-id")!)).toMatchObject({
      kind: "embedding",
      promptTokens: data.usage.prompt_tokens,
      completionTokens: 0,
    });
    const res = await fetch(`${hearth.url}/v1/image_generation/accounts/hearth/models/hearth-sketch`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a red circle", width: 128, height: 96, steps: 7, samples: 2, seed: 1 }),
    });
    expect(res.status).toBe(200);
    expect(await recordOf(res.headers.get("x-request-id")!)).toMatchObject({
      kind: "image",
      baseModelId: "hearth-sketch",
      images: 2,
      imageSteps: 14,
      imagePixels: 2 * 128 * 96,
      outcome: "finished",
    });
  });

  it("sums them by model, key, day, and day and model for the account, to the token; others' usage is not its to read", async () => {
    const db = hearth.api.database.db;
    const records = await db.select().from(usageRecords).where(eq(usageRecords.accountId, "default"));
    const get = async (query: string, key = hearth.apiKey, account = "default") => {
      const res = await fetch(`${hearth.baseURL}/accounts/${account}/usage?${query}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: res.status, body: (await res.json()) as UsageReport & { error?: { message: string } } };
    };
    const sum = (rows: UsageRow[], field: "promptTokens" | "cachedTokens" | "completionTokens" | "images") =>
      rows.reduce((n, r) => n + r[field], 0);
    const byModel = await get("");
    expect(byModel.status, JSON.stringify(byModel.body)).toBe(200);
    expect(byModel.body.groupBy).toBe("model");
    expect(byModel.body.total).toMatchObject({
      requests: records.length,
      promptTokens: sum(records, "promptTokens"),
      cachedTokens: sum(records, "cachedTokens"),
      completionTokens: sum(records, "completionTokens"),
      images: sum(records, "images"),
    });
    const tiny = records.filter((r) => r.model === TINY);
    expect(byModel.body.groups.find((g) => g.group === TINY)).toMatchObject({
      requests: tiny.length,
      completionTokens: sum(tiny, "completionTokens"),
    });
    // No model of the account was deployed; hearth-tiny's records are counted on /metrics, by model.
    expect(byModel.body.deployments).toEqual([]);
    // Without prices, counts only.
    expect(byModel.body.currency).toBeNull();
    expect(byModel.body.cost).toBeUndefined();
    expect(byModel.body.total.cost).toBeUndefined();
    const metrics = await (
      await fetch(`${hearth.url}/metrics`, { headers: { authorization: `Bearer ${hearth.apiKey}` } })
    ).text();
    const counted = (type: string) =>
      Number(
        metrics
          .split("\n")
          .find(
            (l) =>
              l.startsWith("hearth_usage_tokens_total{") &&
              l.includes(`model="${TINY}"`) &&
              l.includes(`type="${type}"`),
          )
          ?.split(" ")
          .at(-1),
      );
    expect(counted("completion")).toBe(sum(tiny, "completionTokens"));
    expect(counted("cached")).toBe(sum(tiny, "cachedTokens"));
    // Every record so far came through this API's meter: its writes added them all, each with its delay.
    const sample = (name: string) => Number(metrics.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1]);
    expect(sample("hearth_usage_write_records_sum")).toBe(records.length);
    expect(sample("hearth_usage_write_records_count")).toBeGreaterThanOrEqual(1);
    expect(sample("hearth_usage_write_records_count")).toBeLessThanOrEqual(records.length);
    expect(sample("hearth_usage_write_delay_seconds_count")).toBe(records.length);
    const byKey = await get("groupBy=key");
    expect(byKey.body.groups).toEqual([expect.objectContaining({ group: keyId, requests: records.length })]);
    // OpenAI's spelling of the parameter means the same.
    expect((await get("group_by=key")).body).toMatchObject({
      groupBy: "key",
      groups: byKey.body.groups,
      total: byKey.body.total,
    });
    const today = new Date().toISOString().slice(0, 10);
    expect((await get("groupBy=day")).body.groups.map((g) => g.group)).toEqual([today]);
    // By day and model (the account page's chart): each model's sums of the day, day and model apart.
    const models = [...new Set(records.map((r) => r.model))].sort();
    expect(models.length).toBeGreaterThan(1);
    expect((await get("groupBy=day_model")).body.groups).toEqual(
      models.map((model) => {
        const rows = records.filter((r) => r.model === model);
        return expect.objectContaining({
          group: `${today}/${model}`,
          day: today,
          model,
          requests: rows.length,
          promptTokens: sum(rows, "promptTokens"),
          completionTokens: sum(rows, "completionTokens"),
          images: sum(rows, "images"),
        });
      }),
    );
    // A period before them all holds nothing; a reversed one is refused.
    const empty = await get("end=2020-01-02T00:00:00Z");
    expect(empty.body.total.requests).toBe(0);
    expect((await get("start=2020-01-02T00:00:00Z&end=2020-01-01T00:00:00Z")).status).toBe(400);
    expect((await get("groupBy=account")).status).toBe(400);

    // Another account reads none of it; its admin-less keys cannot read another's; an admin reads any.
    const other = await createTestAccount(hearth, "usage-other");
    expect((await get("", other.apiKey)).status).toBe(404);
    expect((await get("", other.apiKey, "usage-other")).body.total.requests).toBe(0);
    expect((await get("", hearth.apiKey, "usage-other")).status).toBe(200);
    expect((await get("", hearth.apiKey, "nobody")).status).toBe(404);
    const { key: inferenceOnly } = await issueApiKey(db, { accountId: "default", name: "i", scopes: ["inference"] });
    expect((await get("", inferenceOnly)).status).toBe(403);
  });

  it("exports an account's records as JSON lines, a page at a time, oldest first, to the last", async () => {
    const db = hearth.api.database.db;
    const other = await createTestAccount(hearth, "usage-export");
    // 2,500 records over 2,500 seconds, five ending in the same millisecond: pages of 1,000 must
    // neither skip nor repeat any, ties included.
    const t0 = Date.parse("2026-10-01T00:00:00Z");
    const records = Array.from({ length: 2_500 }, (_, i) => ({
      requestId: `req-${String(i).padStart(5, "0")}`,
      accountId: "usage-export",
      keyId: "k",
      model: "accounts/usage-export/models/m",
      baseModelId: "hearth-tiny",
      kind: "completion" as const,
      promptTokens: i,
      cachedTokens: 0,
      completionTokens: 1,
      images: 0,
      imageSteps: 0,
      imagePixels: 0,
      startedAt: t0,
      endedAt: t0 + (i < 5 ? 999 : i * 1000),
      outcome: "finished" as const,
    }));
    await insertUsageRecords(db, records);
    const exported = async (key: string, query = "start=2026-09-01T00:00:00Z&end=2026-11-01T00:00:00Z") => {
      const res = await fetch(`${hearth.baseURL}/accounts/usage-export/usage/records?${query}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { res, text: await res.text() };
    };
    const { res, text } = await exported(other.apiKey);
    expect(res.status, text.slice(0, 200)).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { requestId: string; promptTokens: number; endedAt: string });
    expect(lines).toHaveLength(2_500);
    expect(new Set(lines.map((l) => l.requestId)).size).toBe(2_500);
    expect(lines.map((l) => l.endedAt)).toEqual([...lines.map((l) => l.endedAt)].sort());
    expect(lines[0]).toMatchObject({
      requestId: "req-00000",
      accountId: "usage-export",
      endedAt: "2026-10-01T00:00:00.999Z",
    });
    expect(lines.reduce((n, l) => n + l.promptTokens, 0)).toBe((2_499 * 2_500) / 2);
    // Others' records are not the default account's to read, but an admin's; a period must move forward.
    const { key: reader } = await issueApiKey(db, { accountId: "default", name: "r", scopes: ["inference", "models"] });
    expect((await exported(reader)).res.status).toBe(404);
    expect((await exported(hearth.apiKey)).text.trimEnd().split("\n")).toHaveLength(2_500);
    expect((await exported(other.apiKey, "start=2026-11-01T00:00:00Z&end=2026-10-01T00:00:00Z")).res.status).toBe(400);
    expect((await exported(other.apiKey, "start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z")).text).toBe("");
  });
});

// The API rolls up old records at start (HEARTH_USAGE_RETENTION_DAYS): its reports, costs
// included, stay the same to the token; its export keeps the records not rolled up.
describe("usage past its retention", () => {
  const DAY = 86_400_000;
  const realNow = Date.now();
  let clock = realNow - 30 * DAY;
  let hearth: TestHearth;
  beforeAll(async () => {
    const prices = { currency: "USD", models: { "*": { promptPerMillion: 1, completionPerMillion: 3 } } };
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_USAGE_RETENTION_DAYS: "7", HEARTH_PRICES: JSON.stringify(prices) },
      now: () => clock,
    });
  });
  afterAll(() => hearth?.close());

  it("sums the daily totals and the records alike, by model, key and day", async () => {
    const records = Array.from({ length: 60 }, (_, i) => ({
      requestId: `old-${i}`,
      accountId: "default",
      keyId: `k${i % 3}`,
      model: i % 2 ? TINY : "accounts/default/models/lora",
      baseModelId: "hearth-tiny",
      kind: "chat" as const,
      promptTokens: 100 + i,
      cachedTokens: i % 7,
      completionTokens: 10 + ((i * 13) % 50),
      images: 0,
      imageSteps: 0,
      imagePixels: 0,
      startedAt: realNow - (i % 12) * DAY - i * 60_000,
      endedAt: realNow - (i % 12) * DAY - i * 60_000,
      outcome: "finished" as const,
    }));
    expect((await insertUsageRecords(hearth.api.database.db, records)).written.size).toBe(60);
    // A period of whole UTC days (a rolled day counts whole at its start).
    const start = new Date(Math.floor((realNow - 20 * DAY) / DAY) * DAY).toISOString();
    const end = new Date(Math.ceil((realNow + DAY) / DAY) * DAY).toISOString();
    const read = async (path: string) => {
      const res = await fetch(`${hearth.baseURL}/accounts/default/usage${path}start=${start}&end=${end}`, {
        headers: { authorization: `Bearer ${hearth.apiKey}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const reports = () => Promise.all(["model", "key", "day"].map((by) => read(`?groupBy=${by}&`)));
    const before = await reports();
    expect(JSON.parse(before[0]!).total.promptTokens).toBe(records.reduce((n, r) => n + r.promptTokens, 0));
    // A month on, the API starts again: the records of the days a week past are rolled up.
    clock = realNow;
    await hearth.restartApi();
    await eventually(async () => {
      const exported = (await read("/records?")).trimEnd().split("\n");
      const cutoff = Math.floor((realNow - 7 * DAY) / DAY) * DAY;
      expect(exported.length).toBe(records.filter((r) => r.endedAt >= cutoff).length);
    }, 10_000);
    expect(await reports()).toEqual(before);
  });
});
