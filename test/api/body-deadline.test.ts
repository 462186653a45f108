import crypto from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, type Management } from "../helpers/management.js";
import { startSlowProxy } from "../helpers/slow-proxy.js";
import { trickleRequest } from "../helpers/trickle-request.js";

const BODY_TIMEOUT_MS = 6_000;

/**
 * Bodies before places (docs/security.md, input bounds): a request's body is read whole, within
 * HEARTH_BODY_TIMEOUT_MS of its headers, before it takes one of its account's intake places. A
 * client that sends its body a byte a second holds only its socket, and gets a 408 at the
 * deadline; the account's other requests go through meanwhile.
 */
describe("a request's body deadline", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let account: Management;
  beforeAll(async () => {
    hearth = await startTestHearth({
      env: {
        HEARTH_INTAKE_PER_ACCOUNT: "1",
        HEARTH_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
        // The slow requests' key is known without a round trip: they would be placed before authentication.
        HEARTH_AUTH_CACHE_TTL_MS: "600000",
      },
    });
    redis = new Redis(hearth.config.redisUrl);
    account = await createTestAccount(hearth, "trickler");
  });
  afterAll(async () => {
    redis?.disconnect();
    await hearth?.close();
  });

  const body = JSON.stringify({ model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 4, temperature: 0 });
  const complete = () => account.call("POST", "/v1/completions", JSON.parse(body));
  const head = (bytes: number) =>
    "POST /v1/completions HTTP/1.1\r\nHost: hearth\r\nContent-Type: application/json\r\n" +
    `Authorization: Bearer ${account.apiKey}\r\nContent-Length: ${bytes}\r\n\r\n`;

  it("lets the account's request through while its slow bodies trickle, then ends each with a 408", async () => {
    // The model loaded and the key's check cached.
    expect((await complete()).status).toBe(200);

    const slow = Array.from({ length: 3 }, () => trickleRequest(hearth.url, head(body.length), body));
    // Each request's headers and two bytes of its body are in: were it placed before its body is read, it is placed now.
    await Promise.all(slow.map((s) => s.sent(head(body.length).length + 2)));
    const started = performance.now();
    const normal = complete();
    const answeredFirst = await Promise.race([
      normal.then(() => "normal"),
      ...slow.map((s) => s.answer.then(() => "a slow one")),
      new Promise((resolve) => setTimeout(() => resolve("nothing"), BODY_TIMEOUT_MS)),
    ]);
    expect(answeredFirst).toBe("normal");
    expect((await normal).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(BODY_TIMEOUT_MS);

    for (const answer of await Promise.all(slow.map((s) => s.answer))) {
      // The server answered at the deadline and closed the connection (`answer` resolves on close).
      expect(answer.status, answer.body).toBe(408);
      expect(answer.headers.connection).toBe("close");
      expect(JSON.parse(answer.body)).toEqual({
        error: {
          message: expect.stringMatching(/HEARTH_BODY_TIMEOUT_MS/),
          type: "invalid_request_error",
          param: null,
          code: "request_timeout",
        },
      });
      expect(answer.ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
      expect(answer.ms).toBeLessThan(BODY_TIMEOUT_MS + 10_000);
    }
    // Nothing of the slow requests is held: no intake place, nothing in flight.
    expect(hearth.api.intake.load("trickler")).toEqual({ active: 0, waiting: 0 });
    expect(await redis.zcard(`${hearth.config.redisPrefix}:in-flight:trickler`)).toBe(0);
    expect((await complete()).status).toBe(200);
  });

  it("never waits for the body of a request whose key is wrong: a 401 at once", async () => {
    const wrong = head(body.length).replace(account.apiKey, "hth_not-a-key-of-this-hearth-00000000000000");
    const slow = trickleRequest(hearth.url, wrong, body);
    const answer = await slow.answer.finally(() => slow.stop());
    expect(answer.status).toBe(401);
    expect(answer.ms).toBeLessThan(BODY_TIMEOUT_MS);
  });

  it("closes a connection whose headers do not arrive within the deadline", async () => {
    const fullHead = head(body.length);
    const slow = trickleRequest(hearth.url, fullHead.slice(0, 30), fullHead.slice(30));
    const answer = await slow.answer;
    slow.stop();
    // Refused by Node's server before the API sees it, answered in Hearth's error shape (client-errors.ts).
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body).error.code).toBe("request_timeout");
    expect(answer.ms).toBeLessThan(BODY_TIMEOUT_MS + 5_000);
  });

  it("lets a file upload take longer than the deadline", async () => {
    expect((await account.createModel("slow-upload")).status).toBe(201);
    const content = crypto.randomBytes(40 * 1024);
    // 1 KiB every 250 ms: 10 s for the upload's body.
    const proxy = await startSlowProxy(hearth.url, /^PUT /, 1024, 250);
    try {
      const started = performance.now();
      const reply = await account.call(
        "PUT",
        `${proxy.url}/v1/accounts/trickler/models/slow-upload/files/adapter_model.safetensors`,
        content,
      );
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(performance.now() - started).toBeGreaterThan(BODY_TIMEOUT_MS);
    } finally {
      await proxy.close();
    }
  });
});
