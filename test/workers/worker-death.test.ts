import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { leaseKey } from "../../src/requests/stream.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { eventually } from "../helpers/eventually.js";
import { lastEventId, readSse } from "../helpers/sse.js";
import { spawnWorker } from "../helpers/worker-process.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { recordOf, tokensReceived } from "../helpers/usage.js";

const MODEL = "accounts/hearth/models/hearth-tiny";
const QUEUE_TIMEOUT_MS = 3_000;
/** The request ID in a lease key: its hash tag (stream.ts). */
const requestIdOf = (leaseKey: string) => /\{([^}]+)\}$/.exec(leaseKey)![1]!;

/**
 * A worker killed (SIGKILL) in the middle of a request, with a second worker alive: the
 * request ends at once with an error, its text is never sent twice, and the next request
 * is served by the worker that is left. Workers are processes of their own.
 */
describe("a worker that dies mid-request", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  const workers: HearthChild[] = [];

  beforeAll(async () => {
    // A short queue timeout, for the requests still queued when the last worker dies.
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS), HEARTH_CONTEXT_SIZE: "2048" },
    });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-worker-death-"));
    // Four jobs at once per worker, as many as its base model's sequences (the derived default
    // is higher, for the adapters' contexts): the last test counts on two requests left queued.
    const env = { HEARTH_WORKER_ROLES: "text", HEARTH_CONTEXT_SIZE: "2048", HEARTH_WORKER_CONCURRENCY: "4" };
    for (let i = 0; i < 4; i++) workers.push(spawnWorker(hearth, dataDir, env, `worker ${i}`));
    await eventually(async () => {
      for (const w of workers) if (!w.running) throw w.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(4);
    }, 90_000);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const post = (body: unknown) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: "The ", max_tokens: 400, temperature: 0, ...(body as object) }),
    });

  /** SIGKILLs the worker that holds the request's lease (its ID is the lease's value). */
  async function killHolder(requestId: string): Promise<void> {
    const holder = await eventually(async () => {
      const id = await redis.get(leaseKey(hearth.config.redisPrefix, requestId));
      expect(id).not.toBeNull();
      return id!;
    });
    const info = (await liveWorkers(redis, hearth.config.redisPrefix)).find((w) => w.id === holder)!;
    const child = workers.find((w) => w.pid === info.pid)!;
    process.kill(child.pid, "SIGKILL");
  }

  it("ends a stream with an error event in time, with no text sent twice, and the next request is served; its record counts what was sent", async () => {
    const res = await post({ stream: true, logprobs: 0 });
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const requestId = requestIdOf((await redis.keys(`${hearth.config.redisPrefix}:lease:*`))[0]!);
    await killHolder(requestId);
    const killedAt = Date.now();
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += new TextDecoder().decode(part.value);
    const endedAfter = Date.now() - killedAt;
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(events.at(-2)!.slice(6))).toMatchObject({ error: { code: "unavailable" } });
    expect(text).not.toMatch(/"finish_reason":"(stop|length)"/);
    // The greedy text so far is a prefix of the whole answer: nothing was sent twice.
    const streamed = events
      .filter((e) => e.startsWith('data: {"id"'))
      .map((e) => (JSON.parse(e.slice(6)) as { choices: { text: string }[] }).choices[0]?.text ?? "")
      .join("");
    const whole = (await (await post({ max_tokens: 400 })).json()) as { choices: { text: string }[] };
    expect(whole.choices[0]!.text.startsWith(streamed)).toBe(true);
    console.log(`stream ended ${endedAfter} ms after the worker was killed`);
    expect(endedAfter).toBeLessThan(2_500);

    // The worker died without its record: the API wrote one, of the tokens it sent.
    const sent = tokensReceived(events.map((e) => ({ id: undefined, data: e.replace(/^(?:id: .*\n)?data: /, "") })));
    expect(sent.tokens).toBeGreaterThan(0);
    expect(await recordOf(hearth, requestId)).toMatchObject({
      outcome: "failed",
      kind: "completion",
      promptTokens: 4, // "The ": hearth-tiny's tokens are bytes
      completionTokens: sent.tokens,
    });
  }, 60_000);

  it("ends a stream resumed after its worker died with an error event, after what was sent", async () => {
    const res = await post({ stream: true, max_tokens: 2000, logprobs: 0 });
    const requestId = res.headers.get("x-request-id")!;
    const before = await readSse(res, { stop: (read) => read.length >= 3 });
    await killHolder(requestId);
    const killedAt = Date.now();
    const resumed = await fetch(`${hearth.baseURL}/streams/${requestId}`, {
      headers: { authorization: `Bearer ${hearth.apiKey}`, "last-event-id": String(lastEventId(before.events)) },
    });
    const rest = await readSse(resumed);
    console.log(`the resumed stream ended ${Date.now() - killedAt} ms after its worker was killed`);
    expect(rest.events.at(-1)!.data).toBe("[DONE]");
    expect(JSON.parse(rest.events.at(-2)!.data)).toMatchObject({ error: { code: "unavailable" } });
    expect(Date.now() - killedAt).toBeLessThan(2_500);
    // The API that relayed the resumed stream wrote its record: every token sent, over both connections.
    const sent = tokensReceived([...before.events, ...rest.events]);
    expect(await recordOf(hearth, requestId)).toMatchObject({ outcome: "failed", completionTokens: sent.tokens });
  }, 60_000);

  it("answers a plain request with a 503 and Retry-After, and the retry succeeds", async () => {
    const pending = post({});
    const requestId = await eventually(async () => {
      const [key] = await redis.keys(`${hearth.config.redisPrefix}:lease:*`);
      expect(key).toBeDefined();
      return requestIdOf(key!);
    });
    await killHolder(requestId);
    const res = await pending;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const retry = await post({ max_tokens: 8 });
    expect(retry.status).toBe(200);
  }, 60_000);

  it("with the only worker killed, every admitted request fails in time: those running within 2 s, those queued within the queue timeout", async () => {
    for (const w of workers.filter((w) => w.running).slice(1)) await w.stop();
    const last = workers.find((w) => w.running)!;
    expect(workers.filter((w) => w.running)).toEqual([last]);
    // Six requests for a worker that runs four at once (HEARTH_WORKER_CONCURRENCY): four run, two wait.
    const startedAt = Date.now();
    const endings = Array.from({ length: 6 }, async (_, i) => {
      const res = await post({ max_tokens: 2000, stream: i % 2 === 0 });
      const body = await res.text();
      const ended = Date.now();
      const streamedError = res.status === 200 && /"error":\{[^}]*"code":"unavailable"/.test(body);
      return { ok: res.status === 503 || streamedError, status: res.status, ended, body: body.slice(-300) };
    });
    await eventually(async () => expect(await redis.keys(`${hearth.config.redisPrefix}:lease:*`)).toHaveLength(4));
    process.kill(last.pid, "SIGKILL");
    const killedAt = Date.now();
    const results = await Promise.all(endings);
    const after = results.map((r) => r.ended - killedAt).sort((a, b) => a - b);
    console.log(
      `requests ended ${after.join(", ")} ms after the only worker was killed (sent ${killedAt - startedAt} ms before)`,
    );
    for (const r of results) expect(r.ok, `${r.status}: ${r.body}`).toBe(true);
    // The four running end on their lease; the two queued on the queue timeout, counted from when they were sent.
    expect(after.slice(0, 4).every((ms) => ms < 2_000)).toBe(true);
    expect(Math.max(...results.map((r) => r.ended - startedAt))).toBeLessThan(QUEUE_TIMEOUT_MS + 3_000);
  }, 60_000);
});
