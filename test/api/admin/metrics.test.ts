import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount } from "../../helpers/management.js";
import { readSse } from "../../helpers/sse.js";

const METRICS_TOKEN = "metrics-token-for-the-test";
const MODEL = "accounts/hearth/models/hearth-tiny";

/** The value of one sample line `name{labels} value`, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf("}"));
    if (Object.entries(labels).every(([k, v]) => inside.includes(`${k}="${v}"`))) return Number(line.split(" ").at(-1));
  }
  return undefined;
}

// GET /metrics: Prometheus text with the API's metrics and the workers' (through Redis).
describe("GET /metrics", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_METRICS_TOKEN: METRICS_TOKEN } });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const scrape = (token?: string) =>
    fetch(`${hearth.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const complete = (stream: boolean) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: "The ", max_tokens: 40, temperature: 0, stream }),
    });

  it("needs the metrics token or an admin key", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("wrong-token-entirely")).status).toBe(401);
    const member = await createTestAccount(hearth, "metrics-member");
    expect((await scrape(member.apiKey)).status).toBe(403);
    expect((await scrape(METRICS_TOKEN)).status).toBe(200);
    expect((await scrape(hearth.apiKey)).status).toBe(200);
  });

  it("counts requests, time to first token, tokens per second, queues and outcomes, and the workers' adapters", async () => {
    expect((await complete(false)).status).toBe(200);
    await readSse(await complete(true));
    const text = await eventually(async () => {
      const body = await (await scrape(METRICS_TOKEN)).text();
      // The worker's metrics come with its heartbeat (every 2 s): wait for one after the requests.
      expect(sample(body, "hearth_worker_adapters_loaded", { model: "hearth-tiny" })).toBeDefined();
      expect(sample(body, "hearth_worker_decode_step_seconds_count", { model: "hearth-tiny" })).toBeGreaterThan(0);
      expect(sample(body, "hearth_worker_prompt_cache_lookups_total", { model: "hearth-tiny" })).toBe(2);
      return body;
    }, 10_000);
    expect(text).toContain("# TYPE hearth_http_requests_total counter");
    expect(
      sample(text, "hearth_http_requests_total", { method: "POST", route: "/v1/completions", status: "200" }),
    ).toBe(2);
    expect(sample(text, "hearth_time_to_first_token_seconds_count", { model: MODEL })).toBe(2);
    expect(sample(text, "hearth_generation_tokens_per_second_count", { model: MODEL })).toBe(2);
    expect(sample(text, "hearth_requests_total", { kind: "completion", outcome: "completed" })).toBe(2);
    expect(sample(text, "hearth_queue_wait_seconds_count", { queue: "inference-{hearth-tiny}" })).toBe(2);
    expect(sample(text, "hearth_model_requests", { model: MODEL, state: "running" })).toBe(0);
    expect(sample(text, "hearth_queue_jobs", { queue: "inference-{hearth-tiny}", state: "waiting" })).toBe(0);
    expect(sample(text, "hearth_queue_jobs", { queue: "inference-{hearth-tiny}!express", state: "waiting" })).toBe(0);
    expect(sample(text, "hearth_queue_jobs", { queue: "{model-lifecycle}", state: "failed" })).toBe(0);
    expect(sample(text, "hearth_worker_adapters_loaded", { worker: hearth.worker!.id, model: "hearth-tiny" })).toBe(0);
    // Each decode: its batch size, and for generation steps their time; the oversubscription gauge
    // (0 or 1: a machine busy with other tests may well slow a window of steps threefold).
    expect(sample(text, "hearth_worker_decode_batch_tokens_count", { model: "hearth-tiny" })).toBeGreaterThan(0);
    expect(sample(text, "hearth_worker_decode_step_seconds_count", { model: "hearth-tiny" })).toBeGreaterThan(0);
    expect(sample(text, "hearth_worker_decode_step_sequences_sum", { model: "hearth-tiny" })).toBeGreaterThan(0);
    // One request at a time: each step one sequence, decoded in one pass.
    const passes = (suffix: string) =>
      sample(text, `hearth_worker_decode_step_passes_${suffix}`, { model: "hearth-tiny" });
    expect(passes("count")).toBe(sample(text, "hearth_worker_decode_step_seconds_count", { model: "hearth-tiny" }));
    expect(passes("sum")).toBe(passes("count"));
    // The time between two steps, in its three parts: each step after the first of a request has all three.
    const between = (part: string) =>
      sample(text, "hearth_worker_step_between_seconds_count", { model: "hearth-tiny", part });
    expect(between("sampling")).toBeGreaterThan(0);
    expect(between("before_sampling")).toBe(between("sampling"));
    expect(between("after_sampling")).toBe(between("sampling"));
    expect([0, 1]).toContain(sample(text, "hearth_worker_cpu_oversubscribed", { model: "hearth-tiny" }));
    // The second request's prompt is the first's: it reuses the cells of 3 of its 4 tokens and erases
    // the rest the first left (39 of its 40 tokens: the last one generated is never evaluated).
    expect(sample(text, "hearth_worker_prompt_cache_hits_total", { model: "hearth-tiny" })).toBe(1);
    expect(sample(text, "hearth_worker_prompt_cache_tokens_total", { model: "hearth-tiny" })).toBe(3);
    expect(sample(text, "hearth_worker_prompt_cache_evicted_tokens_total", { model: "hearth-tiny" })).toBe(40);
    // What the second left idle: 43 cells of 1,280 bytes (hearth-tiny's key and value, every layer, float16).
    expect(sample(text, "hearth_worker_prompt_cache_bytes", { model: "hearth-tiny" })).toBe(43 * 1280);
    expect(text).toContain("hearth_api_process_resident_memory_bytes");
    expect(text).not.toContain(hearth.apiKey);
    expect(text).not.toContain(METRICS_TOKEN);
  });
});
