import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/db/queries/accounts.js";
import { createModel } from "../../src/db/queries/models.js";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import postgres from "postgres";
import { jobs } from "../../src/jobs/jobs.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { testPostgresAdminUrl } from "../helpers/test-databases.js";
import { trickleRequest } from "../helpers/trickle-request.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

async function call(hearth: TestHearth, path: string, body: unknown, init: { key?: string | null; raw?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const key = init.key === undefined ? hearth.apiKey : init.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${hearth.baseURL}${path}`, {
    method: "POST",
    headers,
    body: init.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as ErrorBody };
}

function expectError(r: { status: number; body: ErrorBody }, status: number, type: string, param: string | null) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.type).toBe(type);
  expect(r.body.error.param).toBe(param);
  expect(r.body.error.message.length).toBeGreaterThan(5);
}

describe("errors, with a worker", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_MAX_BODY_BYTES: "2048" } });
  });
  afterAll(() => hearth?.close());

  const completion = (extra: object) => ({ model: MODEL, prompt: "Hi", max_tokens: 4, ...extra });

  it.each([
    ["temperature", { temperature: 3 }],
    ["max_tokens", { max_tokens: 0 }],
    ["n", { n: 9 }],
    ["stop", { stop: ["a", "b", "c", "d", "e"] }],
    ["top_p", { top_p: 0 }],
    ["prompt", { prompt: 42 }],
    ["model", { model: 7 }],
    ["logprobs", { logprobs: 6 }],
    ["logprobs", { logprobs: -1 }],
    ["presence_penalty", { presence_penalty: 5 }],
    ["seed", { seed: -1 }],
    ["seed", { seed: 2 ** 32 }],
    ["stop", { stop: "x".repeat(257) }],
    ["stop[1]", { stop: ["ok", "y".repeat(257)] }],
    ["max_tokens", { max_tokens: 2_000_000 }],
  ])("400 for an invalid %s", async (param, extra) => {
    expectError(await call(hearth, "/completions", completion(extra)), 400, "invalid_request_error", param);
  });

  it("400 when prompts × n asks for too many choices", async () => {
    const r = await call(hearth, "/completions", completion({ prompt: Array(16).fill("x"), n: 8 }));
    expectError(r, 400, "invalid_request_error", "n");
  });

  it("400 for a missing field, naming it", async () => {
    const r = await call(hearth, "/completions", { model: MODEL });
    expectError(r, 400, "invalid_request_error", "prompt");
  });

  it("400 naming a field of the wrong type as such, and only a missing one as required", async () => {
    const chat = { model: MODEL, messages: [{ role: "user", content: "x" }] };
    const cases: [string, object, string, string][] = [
      ["/completions", completion({ max_tokens: "10" }), "max_tokens", 'expected a number, got the string "10"'],
      ["/completions", completion({ max_tokens: 1.5 }), "max_tokens", "expected an integer, got 1.5"],
      [
        "/completions",
        completion({ temperature: null, stream: "yes" }),
        "stream",
        'expected a boolean, got the string "yes"',
      ],
      ["/completions", completion({ model: null }), "model", "expected a string, got null"],
      ["/chat/completions", { ...chat, max_tokens: "10" }, "max_tokens", 'expected a number, got the string "10"'],
      ["/chat/completions", { ...chat, messages: "hi" }, "messages", 'expected an array, got the string "hi"'],
      ["/chat/completions", { ...chat, messages: [{ role: 1, content: "x" }] }, "messages[0].role", "role must"],
      [
        "/embeddings",
        { model: MODEL, input: "x", dimensions: "8" },
        "dimensions",
        'expected a number, got the string "8"',
      ],
      ["/embeddings", { model: MODEL, input: ["x"], user: 5 }, "user", "expected a string, got 5"],
      ["/accounts/hearth/models", { modelId: 5 }, "modelId", "expected a string, got 5"],
      ["/accounts/hearth/models", { modelId: "m", model: [] }, "model", "expected an object, got an array"],
    ];
    for (const [path, body, param, message] of cases) {
      const r = await call(hearth, path, body);
      expectError(r, 400, "invalid_request_error", param);
      expect(r.body.error.message).toContain(message);
      expect(r.body.error.message).not.toMatch(/required/);
    }
    const missing: [string, object, string][] = [
      ["/completions", { prompt: "Hi" }, "model"],
      ["/chat/completions", { model: MODEL }, "messages"],
      ["/chat/completions", { model: MODEL, messages: [{ role: "user" }] }, "messages[0].content"],
      ["/embeddings", { model: MODEL }, "input"],
      ["/accounts/hearth/models", {}, "modelId"],
    ];
    for (const [path, body, param] of missing) {
      const r = await call(hearth, path, body);
      expectError(r, 400, "invalid_request_error", param);
      expect(r.body.error.message).toBe(`${param} is required.`);
    }
  });

  it("400 naming the nested chat field", async () => {
    const r = await call(hearth, "/chat/completions", { model: MODEL, messages: [{ role: "wizard", content: "x" }] });
    expectError(r, 400, "invalid_request_error", "messages[0].role");
    const empty = await call(hearth, "/chat/completions", { model: MODEL, messages: [] });
    expectError(empty, 400, "invalid_request_error", "messages");
  });

  it("400 for a body that is not JSON, or not an object", async () => {
    expectError(await call(hearth, "/completions", null, { raw: "{nope" }), 400, "invalid_request_error", null);
    expectError(await call(hearth, "/completions", [1, 2]), 400, "invalid_request_error", null);
  });

  it("400 before queueing when max_tokens alone does not fit the context, naming the numbers", async () => {
    const r = await call(hearth, "/completions", completion({ max_tokens: 100_000 }));
    expectError(r, 400, "invalid_request_error", "max_tokens");
    expect(r.body.error.message).toBe(
      `max_tokens is 100000, but ${MODEL} has a context of 512 tokens per request, the prompt included; ask for at most 511.`,
    );
    const stream = await call(hearth, "/completions", completion({ max_tokens: 512, stream: true }));
    expectError(stream, 400, "invalid_request_error", "max_tokens");
    const chat = await call(hearth, "/chat/completions", {
      model: MODEL,
      messages: [{ role: "user", content: "x" }],
      max_tokens: 10,
      max_completion_tokens: 5000,
    });
    expectError(chat, 400, "invalid_request_error", "max_completion_tokens");
    expect(chat.body.error.message).toMatch(/^max_completion_tokens is 5000, .* at most 511\.$/);
  });

  it("400 when the prompt and max_tokens together do not fit (decided by the worker)", async () => {
    const r = await call(hearth, "/completions", completion({ prompt: "x".repeat(300), max_tokens: 300 }));
    expectError(r, 400, "invalid_request_error", "max_tokens");
    expect(r.body.error.message).toMatch(/context holds 512 tokens per request; the prompt has 300 tokens/);
  });

  it("400 for embedding dimensions beyond the model's", async () => {
    const r = await call(hearth, "/embeddings", { model: MODEL, input: "x", dimensions: 100_000 });
    expectError(r, 400, "invalid_request_error", "dimensions");
    const bad = await call(hearth, "/embeddings", { model: MODEL, input: "x", encoding_format: "hex" });
    expectError(bad, 400, "invalid_request_error", "encoding_format");
  });

  it("401 without a key and with a wrong one", async () => {
    expectError(await call(hearth, "/completions", completion({}), { key: null }), 401, "authentication_error", null);
    expectError(
      await call(hearth, "/completions", completion({}), { key: "hth_wrongwrongwrongwrongwrongwrongwrong" }),
      401,
      "authentication_error",
      null,
    );
  });

  it("404 for an unknown model, and for another account's model exactly alike", async () => {
    const unknown = await call(hearth, "/completions", completion({ model: "accounts/hearth/models/nope" }));
    expectError(unknown, 404, "not_found_error", "model");
    expectError(await call(hearth, "/completions", completion({ model: "gpt-4" })), 404, "not_found_error", "model");

    const db = hearth.api.database.db;
    await createAccount(db, { id: "someone-else", displayName: "Someone else" });
    await createModel(db, {
      accountId: "someone-else",
      modelId: "private-base",
      kind: "base",
      state: "READY",
      filePath: "/nonexistent.gguf",
    });
    const hidden = await call(
      hearth,
      "/completions",
      completion({ model: "accounts/someone-else/models/private-base" }),
    );
    const missing = await call(
      hearth,
      "/completions",
      completion({ model: "accounts/someone-else/models/missing-base" }),
    );
    expectError(hidden, 404, "not_found_error", "model");
    expect(hidden.body.error.message.replace("private-base", "X")).toBe(
      missing.body.error.message.replace("missing-base", "X"),
    );
  });

  it("413 for a body over the limit", async () => {
    const r = await call(hearth, "/completions", completion({ prompt: "x".repeat(4096) }));
    expectError(r, 413, "invalid_request_error", null);
  });

  it("431 in the same shape for a 100 KB Authorization header, over a raw socket and fetch", async () => {
    // Node refuses such headers before Hono sees them; the answer must still be Hearth's.
    const key = `Bearer ${"k".repeat(100 * 1024)}`;
    const head = `GET /v1/models HTTP/1.1\r\nHost: hearth\r\nAuthorization: ${key}\r\n\r\n`;
    const raw = trickleRequest(hearth.url, head, "");
    const answer = await raw.answer;
    raw.stop();
    expect(answer.status).toBe(431);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(answer.headers.connection).toBe("close");
    expect(Number(answer.headers["content-length"])).toBe(Buffer.byteLength(answer.body));
    expectError({ status: answer.status, body: JSON.parse(answer.body) }, 431, "invalid_request_error", null);
    expect(JSON.parse(answer.body).error.code).toBe("request_header_fields_too_large");

    const res = await fetch(`${hearth.baseURL}/models`, { headers: { authorization: key } });
    expect(res.status).toBe(431);
    expect(((await res.json()) as ErrorBody).error.code).toBe("request_header_fields_too_large");
  });

  it("404 in the same shape for an unknown route", async () => {
    const res = await fetch(`${hearth.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as ErrorBody).error.type).toBe("not_found_error");
  });

  it("reports ready with a worker", async () => {
    const res = await fetch(`${hearth.url}/readyz`);
    expect(res.status).toBe(200);
    const ready = (await res.json()) as { backends: Record<string, number> };
    expect(ready).toMatchObject({ status: "ready", database: "ok", redis: "ok", workers: 1 });
    // Which backend the worker's models compute on (the CPU here; a GPU's where there is one).
    expect(Object.values(ready.backends)).toEqual([1]);
    expect(["cpu", "cuda", "vulkan", "metal"]).toContain(Object.keys(ready.backends)[0]);
    expect((await fetch(`${hearth.url}/healthz`)).status).toBe(200);
  });
});

describe("errors, without a worker", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_QUEUE_TIMEOUT_MS: "600", HEARTH_MAX_QUEUE_DEPTH: "1" },
    });
  });
  afterAll(() => hearth?.close());

  it("503 within the queue timeout when no worker runs, and 429 when the queue is full", async () => {
    const started = Date.now();
    const first = call(hearth, "/completions", { model: MODEL, prompt: "Hi", max_tokens: 4 });
    // The second request is refused once the first one's job waits in the queue.
    const connection = new Redis(hearth.config.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(jobs.inference.queueName("hearth-tiny"), { connection, prefix: hearth.config.redisPrefix });
    try {
      // Queued with a priority (fair scheduling), so in the prioritized set.
      await eventually(async () => expect(await queue.getJobCountByTypes("waiting", "prioritized")).toBe(1));
    } finally {
      await queue.close();
      connection.disconnect();
    }
    const second = await call(hearth, "/completions", { model: MODEL, prompt: "Hi", max_tokens: 4, stream: true });
    expectError(second, 429, "rate_limit_error", null);
    const r = await first;
    expectError(r, 503, "service_unavailable_error", null);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("reports not ready", async () => {
    const res = await fetch(`${hearth.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "not ready", workers: 0 });
  });
});

describe("errors when Redis goes away", () => {
  let redis: PrivateRedis;
  let hearth: TestHearth;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    hearth = await startTestHearth({ worker: false, env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await redis?.kill();
    await hearth?.close();
  });

  it("503 quickly, not a hang", async () => {
    await redis.kill();
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const r = await call(hearth, "/completions", { model: MODEL, prompt: "Hi", max_tokens: 4 });
    expectError(r, 503, "service_unavailable_error", null);
    expect(Date.now() - started).toBeLessThan(5_000);
    const ready = await fetch(`${hearth.url}/readyz`);
    expect(await ready.json()).toEqual({
      status: "not ready",
      database: "ok",
      redis: "down",
      workers: 0,
      backends: {},
    });
  });
});

describe("errors when PostgreSQL goes away", () => {
  let hearth: TestHearth;
  let admin: postgres.Sql;
  let name: string;
  beforeAll(async () => {
    hearth = await startTestHearth({ backend: "postgres", worker: false });
    name = new URL(hearth.config.databaseUrl!).pathname.slice(1);
    admin = postgres(testPostgresAdminUrl, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin?.unsafe(`alter database "${name}" allow_connections true`);
    await admin?.end();
    await hearth?.close();
  });

  it("503, not a 500 or a hang", async () => {
    await admin.unsafe(`alter database "${name}" allow_connections false`);
    await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
    const r = await call(hearth, "/completions", { model: MODEL, prompt: "Hi", max_tokens: 4 });
    expectError(r, 503, "service_unavailable_error", null);
    const ready = await fetch(`${hearth.url}/readyz`);
    expect(ready.status).toBe(503);
    // Which dependency is down, and nothing of why: no host, database name or driver message.
    expect(await ready.json()).toEqual({
      status: "not ready",
      database: "down",
      redis: "ok",
      workers: 0,
      backends: {},
    });
  });

  it("serves again once the database is back, without a restart", async () => {
    await admin.unsafe(`alter database "${name}" allow_connections true`);
    const models = () => fetch(`${hearth.baseURL}/models`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    let res = await models();
    for (let i = 0; i < 100 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await models();
    }
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain(MODEL);
  });
});
