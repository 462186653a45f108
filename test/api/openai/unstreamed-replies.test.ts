import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSTREAMED_HOLD_MS } from "../../../src/requests/reply-publisher.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

/**
 * A request that is not streamed is read whole, so its worker sends the tokens after the first
 * in a few events (reply-publisher.ts, UNSTREAMED_HOLD_MS) instead of one per token: counted
 * here on the API's reply channel, with the answer still exactly the model's.
 */
describe("the reply of a request that is not streamed", () => {
  let hearth: TestHearth;
  let listener: Redis;
  const tokenEvents = new Map<string, number>();

  beforeAll(async () => {
    hearth = await startTestHearth();
    listener = new Redis(hearth.config.redisUrl);
    await listener.psubscribe(`${hearth.config.redisPrefix}:reply:*`);
    listener.on("pmessage", (_pattern: string, _channel: string, message: string) => {
      const event = JSON.parse(message) as { id: string; type: string };
      if (event.type === "token") tokenEvents.set(event.id, (tokenEvents.get(event.id) ?? 0) + 1);
    });
  });
  afterAll(async () => {
    listener?.disconnect();
    await hearth?.close();
  });

  it("comes in a few token events, holding every token in order", async () => {
    const started = performance.now();
    const res = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: "Once ", max_tokens: 300, temperature: 0 }),
    });
    const elapsedMs = performance.now() - started;
    const body = (await res.json()) as { choices: { text: string }[]; usage: { completion_tokens: number } };
    expect(res.status).toBe(200);
    expect(body.choices[0]!.text).toBe(greedyText("Once ", 300));
    const events = tokenEvents.get(res.headers.get("x-request-id")!);
    // The first token alone, then one event per hold at most (and one more for the rest before done).
    expect(events).toBeGreaterThan(0);
    expect(events).toBeLessThanOrEqual(2 + Math.ceil(elapsedMs / UNSTREAMED_HOLD_MS));
    expect(events).toBeLessThan(body.usage.completion_tokens);
  });
});
