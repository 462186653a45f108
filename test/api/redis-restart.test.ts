import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

// Redis restarts empty (no persistence), as a cache-like Redis would: the API and the worker
// reconnect on their own, and requests work again without restarting either.
describe("when Redis restarts", () => {
  let redis: PrivateRedis;
  let hearth: TestHearth;
  let client: OpenAI;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    hearth = await startTestHearth({ env: { REDIS_URL: redis.url } });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
    await redis?.kill();
  });

  const request = { model: MODEL, prompt: "Hi", max_tokens: 4, temperature: 0 };
  async function complete(stream: boolean): Promise<string> {
    if (!stream) return (await client.completions.create(request)).choices[0]!.text;
    let text = "";
    for await (const chunk of await client.completions.create({ ...request, stream: true }))
      text += chunk.choices[0]?.text ?? "";
    return text;
  }

  /** Retries while the answer is a 503 (Redis not back yet, or a worker still reconnecting). */
  async function eventually<T>(attempt: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof OpenAI.APIError) || error.status !== 503 || Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  it("serves again, streamed and not, once Redis is back", async () => {
    const before = await complete(false);
    await redis.kill();
    await expect(complete(false)).rejects.toMatchObject({ status: 503 });
    redis = await startPrivateRedis(redis.port);
    expect(await eventually(() => complete(false))).toBe(before);
    expect(await eventually(() => complete(true))).toBe(before);
    const ready = await eventually(async () => {
      const res = await fetch(`${hearth.url}/readyz`);
      if (res.status !== 200) throw new OpenAI.APIError(res.status, undefined, "not ready", undefined);
      return res.json();
    });
    expect(ready).toMatchObject({ status: "ready", redis: "ok", workers: 1 });
  });
});

describe("when Redis is gone for good", () => {
  let timer: NodeJS.Timeout | undefined;
  /** What `promise` settles to, or "hang" if it has not after 30 s. */
  const orHang = <T>(promise: Promise<T>) =>
    Promise.race([
      promise,
      new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), 30_000))),
    ]).finally(() => clearTimeout(timer));

  it("a stream in flight ends with an error, and the worker and the API still close", async () => {
    const redis = await startPrivateRedis();
    const hearth = await startTestHearth({ env: { REDIS_URL: redis.url } });
    const client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
    const stream = await client.completions.create({ model: MODEL, prompt: "Hi", max_tokens: 400, stream: true });
    const chunks = stream[Symbol.asyncIterator]();
    await chunks.next(); // the worker is generating
    await redis.kill();
    const rest = (async () => {
      for (let c = await chunks.next(); !c.done; c = await chunks.next());
      return "ended without an error";
    })();
    const ending = await orHang(rest.catch((error: Error) => error));
    expect(ending).toBeInstanceOf(OpenAI.APIError);
    expect((ending as Error).message).toMatch(/connection to the queue \(Redis\) was lost/);
    expect(await orHang(hearth.close().then(() => "closed"))).toBe("closed");
  });
});
