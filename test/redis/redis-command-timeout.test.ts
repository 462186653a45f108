import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

const COMMAND_TIMEOUT_MS = 500;

// A Redis that stops answering (SIGSTOP: its connections stay open, nothing comes back) turns
// a request into a 503 within HEARTH_REDIS_COMMAND_TIMEOUT_MS, not a hang; once it answers
// again, so does Hearth.
describe("the API with a Redis that stopped answering", () => {
  let redis: PrivateRedis;
  let hearth: TestHearth;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    hearth = await startTestHearth({
      worker: false,
      env: {
        REDIS_URL: redis.url,
        HEARTH_REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
        HEARTH_QUEUE_TIMEOUT_MS: "1000",
      },
    });
  }, 60_000);
  afterAll(async () => {
    redis?.process.kill("SIGCONT");
    await hearth?.close();
    await redis?.kill();
  });

  const complete = (stream: boolean) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt: "x", max_tokens: 2, stream }),
    });

  it("answers 503 in bounded time, streamed or not, and serves again once Redis answers", async () => {
    redis.process.kill("SIGSTOP");
    try {
      for (const stream of [false, true]) {
        const started = Date.now();
        const res = await complete(stream);
        const ms = Date.now() - started;
        expect(res.status, `stream: ${stream}`).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + 3_000);
      }
    } finally {
      redis.process.kill("SIGCONT");
    }
    // Redis answers again: the request is queued, and (no worker here) ends at the queue timeout.
    const res = await complete(false);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/No worker took the request/);
  }, 30_000);
});
