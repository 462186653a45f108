import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, type RedisClient } from "../../src/redis/connection.js";
import { jobs, type InferencePayload } from "../../src/jobs/jobs.js";
import { renewLease, sendEvent, subscribeCancels } from "../../src/requests/stream.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { readSse } from "../helpers/sse.js";

const TIMEOUT_MS = 800;

/**
 * A worker that is alive (it keeps its lease) but sends nothing, as one whose engine hangs:
 * the request fails after HEARTH_FIRST_TOKEN_TIMEOUT_MS (nothing yet) or
 * HEARTH_INTER_TOKEN_TIMEOUT_MS (mid-answer), and the stuck job is cancelled.
 */
describe("a worker that goes quiet", () => {
  let hearth: TestHearth;
  let redis: RedisClient;
  let subscriber: RedisClient;
  let stuck: Worker;
  const cancels: string[] = [];
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });

  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_FIRST_TOKEN_TIMEOUT_MS: String(TIMEOUT_MS), HEARTH_INTER_TOKEN_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    const prefix = hearth.config.redisPrefix;
    redis = createRedis(hearth.config, "worker");
    subscriber = createRedis(hearth.config, "subscriber");
    await subscribeCancels(subscriber, prefix, (requestId) => cancels.push(requestId));
    // Takes a job, holds its lease, sends one token if the prompt asks for it, then nothing.
    stuck = new Worker(
      jobs.inference.queueName("hearth-tiny"),
      async (job) => {
        const data = job.data as Extract<InferencePayload, { kind: "completion" }>;
        const to = { prefix, requestId: data.requestId, replyTo: data.replyTo, logTtlMs: data.logTtlMs ?? 0 };
        await renewLease(redis, to, "stuck");
        const lease = setInterval(() => void renewLease(redis, to, "stuck").catch(() => {}), 200);
        if (data.prompts[0] === "one token ") await sendEvent(redis, to, 1, { type: "token", index: 0, text: "x" });
        await released;
        clearInterval(lease);
      },
      { connection: createRedis(hearth.config, "worker"), prefix, concurrency: 4 },
    );
  });
  afterAll(async () => {
    release();
    await stuck?.close();
    redis?.disconnect();
    subscriber?.disconnect();
    await hearth?.close();
  });

  const request = (prompt: string, stream: boolean) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt, max_tokens: 50, stream }),
    });

  it("fails a request with no first token in time with a 503, and cancels its job", async () => {
    const started = Date.now();
    const res = await request("nothing ", false);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(new RegExp(`sent nothing for ${TIMEOUT_MS} ms after it started`));
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    // The cancel goes out before the answer, and reaches this subscriber a moment later.
    const requestId = res.headers.get("x-request-id") ?? "(none)";
    await expect.poll(() => cancels.includes(requestId)).toBe(true);
  });

  it("ends a stream that stops mid-answer with an error event, and cancels its job", async () => {
    const res = await request("one token ", true);
    const { events } = await readSse(res);
    expect(events.map((e) => e.data.slice(0, 9))).toEqual(['{"id":"cm', '{"error":', "[DONE]"]);
    expect(JSON.parse(events[1]!.data).error.message).toMatch(/in the middle of the answer/);
    const requestId = res.headers.get("x-request-id")!;
    await expect.poll(() => cancels.includes(requestId)).toBe(true);
  });
});
