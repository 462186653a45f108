import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/auth/api-keys.js";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, defaultAccount, management, type Management, type Reply } from "../helpers/management.js";

/**
 * The abuse limits of docs/security.md, each past its bound: requests per minute per key and
 * per account, tokens per minute (estimated, then corrected to the usage), requests in flight,
 * failed authentications per address, and the quotas on models and stored bytes.
 */

const complete = (who: Management, extra: Record<string, unknown> = {}) =>
  who.call("POST", "/v1/completions", { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 4, ...extra });

function expect429(reply: Reply, message: RegExp) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(429);
  expect(reply.body.error.message).toMatch(message);
  expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

describe("limits", () => {
  let hearth: TestHearth;
  let admin: Management;
  const setLimits = async (accountId: string, limits: Record<string, number | null>) => {
    const reply = await admin.call("PATCH", `/v1/admin/accounts/${accountId}`, { limits });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  beforeAll(async () => {
    hearth = await startTestHearth({
      env: {
        HEARTH_KEY_REQUESTS_PER_MINUTE: "8",
        HEARTH_AUTH_FAILURES_PER_MINUTE: "3",
        HEARTH_AUTH_CACHE_TTL_MS: "0",
      },
    });
    admin = defaultAccount(hearth);
  });
  afterAll(() => hearth?.close());

  it("counts requests per minute for each key, and answers with OpenAI's x-ratelimit headers", async () => {
    const acme = await createTestAccount(hearth, "acme");
    const first = await acme.call("GET", "/v1/whoami");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("8");
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("7");
    expect(first.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+m)?\d+(\.\d)?s$|^\d+ms$/);
    for (let i = 0; i < 7; i++) expect((await acme.call("GET", "/v1/whoami")).status).toBe(200);
    expect429(await acme.call("GET", "/v1/whoami"), /This API key made more than 8 requests this minute/);
    // Another key of the same account has its own count.
    const { key } = await issueApiKey(hearth.api.database.db, { accountId: "acme", name: "b", scopes: ["inference"] });
    expect((await management(hearth, "acme", key).call("GET", "/v1/whoami")).status).toBe(200);
  });

  it("counts requests per minute for each account, as an admin sets it", async () => {
    const account = await setLimits("busy", { requestsPerMinute: 3 }).catch(() => undefined);
    expect(account).toBeUndefined(); // no such account yet: the PATCH was a 404
    const busy = await createTestAccount(hearth, "busy");
    const other = management(
      hearth,
      "busy",
      (await issueApiKey(hearth.api.database.db, { accountId: "busy", name: "2", scopes: ["inference"] })).key,
    );
    expect((await setLimits("busy", { requestsPerMinute: 3 })).limits).toMatchObject({ requestsPerMinute: 3 });
    expect((await busy.call("GET", "/v1/whoami")).headers.get("x-ratelimit-limit-requests")).toBe("3");
    expect((await other.call("GET", "/v1/whoami")).status).toBe(200);
    expect((await busy.call("GET", "/v1/whoami")).status).toBe(200);
    // Both keys draw on the account's minute.
    expect429(await other.call("GET", "/v1/whoami"), /Account "busy" made more than 3 requests this minute/);
    // Back to the default (here far above): the window already counted still applies to the new limit.
    expect((await setLimits("busy", { requestsPerMinute: null })).limits.requestsPerMinute).toBe(1_000_000);
    expect((await busy.call("GET", "/v1/whoami")).status).toBe(200);
  });

  it("counts tokens per minute on the prompt and max_tokens at admission, corrected to the usage at the end", async () => {
    const words = await createTestAccount(hearth, "words");
    await setLimits("words", { tokensPerMinute: 300 });
    // "Hi" is 2 bytes (+1 for BOS): up to 3 + 200 tokens. It stops at the first "e", well before 200.
    const short = await complete(words, { max_tokens: 200, stop: ["e"] });
    expect(short.status, JSON.stringify(short.body)).toBe(200);
    expect(short.headers.get("x-ratelimit-limit-tokens")).toBe("300");
    expect(short.headers.get("x-ratelimit-remaining-tokens")).toBe("97");
    const used = short.body.usage.total_tokens as number;
    expect(used).toBeLessThan(50);
    // Corrected at the end: without the refund, 203 more would not fit in 300.
    const long = await complete(words, { max_tokens: 200 });
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    expect(Number(long.headers.get("x-ratelimit-remaining-tokens"))).toBe(300 - used - 203);
    expect429(await complete(words, { max_tokens: 200 }), /Account "words" has used its 300 tokens per minute/);
    const refused = await complete(words, { max_tokens: 200 });
    expect(refused.headers.get("x-ratelimit-limit-tokens")).toBe("300");
    // A request that could never fit says so.
    const huge = await complete(words, { max_tokens: 400 });
    expect(huge.status).toBe(429);
    expect(huge.body.error).toMatchObject({ param: "max_tokens" });
    expect(huge.body.error.message).toMatch(/may use up to 403 tokens .* more than the 300 tokens per minute/);
  });

  it("caps the requests an account has queued or running", async () => {
    const streamer = await createTestAccount(hearth, "streamer");
    await setLimits("streamer", { maxInFlightRequests: 2 });
    const open = await Promise.all(
      [0, 1].map(() =>
        fetch(`${hearth.baseURL}/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${streamer.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: HEARTH_TINY_REF, prompt: "Go", max_tokens: 400, stream: true }),
        }),
      ),
    );
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    // A stream's answer carries the headers too.
    expect(open[0]!.headers.get("x-ratelimit-limit-tokens")).toBe("1000000");
    expect(open[0]!.headers.get("x-ratelimit-remaining-requests")).not.toBeNull();
    expect429(await complete(streamer), /Account "streamer" has 2 requests queued or running, its limit/);
    // Others are not held back by it.
    expect((await complete(await createTestAccount(hearth, "bystander"))).status).toBe(200);
    for (const r of open) await r.text();
    expect((await complete(streamer)).status).toBe(200);
  });

  it("refuses a client address that failed authentication too often, before asking the database", async () => {
    expect((await admin.call("GET", "/v1/whoami")).status).toBe(200); // now known to be good
    const bad = management(hearth, "default", "hth_not-a-real-key-but-well-formed-0000000000");
    for (let i = 0; i < 3; i++) expect((await bad.call("GET", "/v1/whoami")).status).toBe(401);
    expect429(await bad.call("GET", "/v1/whoami"), /Too many failed authentications from .* this minute/);
    // A key known to be good is not locked out with the address (test/api/failed-authentications.test.ts).
    expect((await admin.call("GET", "/v1/whoami")).status).toBe(200);
  });
});

describe("quotas", () => {
  let hearth: TestHearth;
  let owner: Management;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_ACCOUNT_MAX_STORED_BYTES: "4096", HEARTH_ACCOUNT_MAX_MODELS: "2" },
    });
    owner = await createTestAccount(hearth, "owner");
  });
  afterAll(() => hearth?.close());

  it("limits the models an account has: 429 naming the quota, nothing created", async () => {
    expect((await owner.createModel("one")).status).toBe(201);
    expect((await owner.createModel("two")).status).toBe(201);
    const third = await owner.createModel("three");
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ type: "insufficient_quota", code: "quota_exceeded" });
    expect(third.body.error.message).toBe(
      'Account "owner" has 2 models, its quota of 2: delete one, or ask an admin for more.',
    );
    expect((await owner.getModel("three")).status).toBe(404);
  });

  it("limits the bytes an account stores: 413 naming the quota, nothing stored; a replaced file counts once", async () => {
    expect((await owner.upload("one", "adapter_config.json", "x".repeat(3000))).status).toBe(200);
    // Replacing it does not count the old content.
    expect((await owner.upload("one", "adapter_config.json", "y".repeat(3500))).status).toBe(200);
    const over = await owner.upload("two", "adapter_config.json", "z".repeat(1000));
    expect(over.status).toBe(413);
    expect(over.body.error.message).toBe(
      'adapter_config.json is 1000 bytes, more than the 596 bytes left of account "owner"\'s storage quota (4096 bytes, 3500 in use): delete files or models, or ask an admin for more; nothing was stored.',
    );
    // Without a Content-Length, the stream is cut at the quota.
    const streamed = await fetch(`${hearth.url}/v1/accounts/owner/models/two/files/hearth.json`, {
      method: "PUT",
      headers: { authorization: `Bearer ${owner.apiKey}` },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(800).fill(32));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: { message: string } }).error.message).toMatch(/storage quota/);
    const files = await owner.getModel("two");
    expect(files.body.files ?? []).toEqual([]);
    expect((await owner.upload("two", "hearth.json", "{}")).status).toBe(200);
  });

  it("holds the bytes quota when two uploads end together: the second to be stored is checked against the first", async () => {
    const removed = await owner.call("DELETE", "/v1/accounts/owner/models/one/files/adapter_config.json");
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    // 2 bytes in use of 4096: each upload of 3000 bytes fits alone, and passes the check at its start.
    const uploads = ["one", "two"].map((modelId) => {
      let push: (data: Uint8Array | null) => void = () => {};
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (data) => (data ? controller.enqueue(data) : controller.close());
        },
      });
      const reply = fetch(`${hearth.url}/v1/accounts/owner/models/${modelId}/files/adapter_config.json`, {
        method: "PUT",
        headers: { authorization: `Bearer ${owner.apiKey}` },
        body,
        duplex: "half",
      } as RequestInit);
      // Awaited below; should the test fail first, its end closes the connection, which is no further error.
      reply.catch(() => {});
      push(new Uint8Array(1000).fill(32));
      return { push, reply };
    });
    // Both are being stored (each has its partial file) before either ends.
    const { dir } = hearth.config.storage as { dir: string };
    const partials = async () =>
      (await fs.readdir(path.join(dir, "models/owner"), { recursive: true })).filter((f) => f.endsWith(".partial"));
    // Each model's upload has its partial file (a set: any other partial, or a name listed twice, is named in the message).
    await eventually(async () => {
      const found = await partials();
      const uploading = new Set(
        found.filter((f) => f.includes("adapter_config.json.")).map((f) => f.split(path.sep)[0]),
      );
      expect([...uploading].sort(), found.join(", ")).toEqual(["one", "two"]);
    }, 10_000);
    for (const upload of uploads) {
      upload.push(new Uint8Array(2000).fill(32));
      upload.push(null);
    }
    const replies = await Promise.all(
      uploads.map(async (u) => {
        const reply = await u.reply;
        return { status: reply.status, body: (await reply.json()) as { error?: { message: string } } };
      }),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 413]);
    expect(replies.find((r) => r.status === 413)!.body.error!.message).toBe(
      'adapter_config.json is larger than the 1094 bytes left of account "owner"\'s storage quota (4096 bytes, 3002 in use): delete files or models, or ask an admin for more; nothing was stored.',
    );
    const stored = await Promise.all(["one", "two"].map(async (m) => (await owner.getModel(m)).body.files ?? []));
    expect(stored.flat().reduce((sum: number, f: { size: number }) => sum + f.size, 0)).toBe(3002);
    // No partial file stays. An aborted request's (the client may retry a PUT on a fresh
    // connection once the server closed the old one) is removed as its connection closes, so
    // that removal is waited for; a partial left for good still fails.
    await eventually(async () => expect(await partials()).toEqual([]));
  });

  it("shows an account its limits as they apply", async () => {
    const account = await owner.call("GET", "/v1/accounts/owner");
    expect(account.body.limits).toEqual({
      requestsPerMinute: 1_000_000,
      tokensPerMinute: 1_000_000,
      maxInFlightRequests: 100_000,
      maxModels: 2,
      maxStoredBytes: 4096,
    });
  });
});
