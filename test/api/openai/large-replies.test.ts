import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddingEvents, MAX_EVENT_CHARS } from "../../../src/requests/stream.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";
import { startPrivateRedis, type PrivateRedis } from "../../helpers/redis.js";
import { readSse, textOf } from "../../helpers/sse.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

describe("embedding events", () => {
  it("are each at most MAX_EVENT_CHARS of JSON, and hold every vector in order", () => {
    for (const dimensions of [1, 320, 1024, 4096, 8192]) {
      // -0.1234567890123: about as long as a float's JSON gets.
      const vectors = Array.from({ length: 300 }, () => Array.from({ length: dimensions }, () => -0.1234567890123));
      const events = embeddingEvents(vectors);
      const sizes = events.map((e) => JSON.stringify(e).length);
      expect(Math.max(...sizes), `${dimensions} dimensions`).toBeLessThanOrEqual(MAX_EVENT_CHARS);
      expect(events.flatMap((e) => (e.type === "embeddings" ? e.vectors : []))).toEqual(vectors);
      let next = 0;
      for (const e of events) {
        expect(e).toMatchObject({ type: "embeddings", start: next });
        next += e.type === "embeddings" ? e.vectors.length : 0;
      }
    }
  });
});

// One request's answer must never cut off the others on the same API: Redis drops a pub/sub
// connection whose output buffer passes its hard limit, and an API has one for all its
// requests. Here the limit is 1 MB, and one embeddings answer is several times that.
describe("a huge embeddings request beside a stream, on one API", () => {
  let redis: PrivateRedis;
  let hearth: TestHearth;
  beforeAll(async () => {
    redis = await startPrivateRedis(undefined, { "client-output-buffer-limit": "pubsub 1mb 1mb 0" });
    hearth = await startTestHearth({ env: { REDIS_URL: redis.url } });
  }, 120_000);
  afterAll(async () => {
    await hearth?.close();
    await redis?.kill();
  });

  it("answers both in full: the embeddings go in bounded messages", async () => {
    const headers = { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" };
    const streamed = fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: MODEL, prompt: "Beside ", max_tokens: 400, temperature: 0, stream: true }),
    }).then((r) => readSse(r));
    const inputs = Array.from({ length: 2048 }, (_, i) => `input number ${i}: ${"the hearth keeps ".repeat(i % 7)}`);
    const embedded = await fetch(`${hearth.baseURL}/embeddings`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: MODEL, input: inputs }),
    });
    const body = await embedded.text();
    expect(embedded.status, body.slice(0, 300)).toBe(200);
    // As one message it would be twice the buffer's limit.
    expect(body.length).toBeGreaterThan(2_000_000);
    const { data } = JSON.parse(body) as { data: { index: number; embedding: number[] }[] };
    expect(data.map((d) => d.index)).toEqual(inputs.map((_, i) => i));
    const one = await fetch(`${hearth.baseURL}/embeddings`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: MODEL, input: inputs[1234] }),
    }).then((r) => r.json() as Promise<{ data: { embedding: number[] }[] }>);
    expect(data[1234]!.embedding).toEqual(one.data[0]!.embedding);

    const stream = await streamed;
    expect(stream.events.at(-1)!.data).toBe("[DONE]");
    expect(textOf(stream.events)).toBe(greedyText("Beside ", 400));
  }, 120_000);
});
