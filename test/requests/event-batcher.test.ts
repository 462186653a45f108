import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedis, waitForRedis, type RedisClient } from "../../src/redis/connection.js";
import { EventBatcher } from "../../src/requests/event-batcher.js";
import {
  decodeMessages,
  eventLogKey,
  MAX_EVENT_CHARS,
  routeKey,
  sendEvent,
  type ReplyAddress,
  type StreamEvent,
} from "../../src/requests/stream.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";

/**
 * The worker's events of several requests, sent together (event-batcher.ts) on a real Redis: a
 * request alone sends at once; several wait for one another's next event (a step's worth) or
 * the window, then go in one script, one message per API process, each event still logged
 * under its own ID; a resumed request's events follow its route; a refused log entry fails that
 * event only; the API reads both a lone event and an array.
 */
describe("sending several requests' events together", () => {
  let redis: PrivateRedis;
  let publisher: RedisClient;
  let probe: Redis;
  let subscriber: Redis;
  const messages: { channel: string; message: string }[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    publisher = createRedis({ redisUrl: redis.url }, "publisher");
    probe = createRedis({ redisUrl: redis.url }, "worker") as Redis;
    subscriber = createRedis({ redisUrl: redis.url }, "subscriber") as Redis;
    subscriber.on("message", (channel: string, message: string) => messages.push({ channel, message }));
    await waitForRedis(subscriber, 10_000);
    await subscriber.subscribe("t:reply:a", "t:reply:b");
  });
  afterAll(async () => {
    for (const c of [publisher, probe, subscriber]) c?.disconnect();
    await redis?.kill();
  });

  const to = (requestId: string, replyTo = "t:reply:a", logTtlMs = 60_000): ReplyAddress => ({
    prefix: "t",
    requestId,
    replyTo,
    logTtlMs,
  });
  const token = (text: string): StreamEvent => ({ type: "token", index: 0, text });
  const evals = async () => Number(/cmdstat_eval:calls=(\d+)/.exec(await probe.info("commandstats"))?.[1] ?? 0);
  const received = async (count: number) => {
    await expect.poll(() => messages.length).toBeGreaterThanOrEqual(count);
    return messages.splice(0);
  };

  it("sends a lone request's events at once, and waits for the others' when several stream", async () => {
    // A window far longer than the test: only another request's event can end a wait.
    const batcher = new EventBatcher(publisher, 60_000);
    expect(await batcher.send(to("x"), 1, token("x1"))).toBe(1);
    expect((await received(1)).map((m) => decodeMessages(m.message))).toEqual([[{ id: "x", seq: 1, ...token("x1") }]]);

    // y starts while x streams: its event waits until x has its next one (a step's worth).
    const before = await evals();
    let y1Sent = false;
    const y1 = batcher.send(to("y"), 1, token("y1")).then((n) => {
      y1Sent = true;
      return n;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(y1Sent).toBe(false);
    const x2 = batcher.send(to("x"), 2, {
      type: "done",
      choices: [{ index: 0, finishReason: "stop" }],
      usage: usage(),
    });
    expect(await Promise.all([y1, x2])).toEqual([1, 1]);
    // One script, one message holding both, in the order they were sent.
    expect((await evals()) - before).toBe(1);
    const [both] = await received(1);
    expect(both!.message.startsWith("[")).toBe(true);
    expect(decodeMessages(both!.message).map((m) => [m.id, m.seq, m.type])).toEqual([
      ["y", 1, "token"],
      ["x", 2, "done"],
    ]);
    // Each logged under its own request, at its own place.
    expect((await probe.xrange(eventLogKey("t", "x"), "-", "+")).map(([entry]) => entry)).toEqual(["1-1", "1-2"]);
    expect((await probe.xrange(eventLogKey("t", "y"), "-", "+")).map(([entry]) => entry)).toEqual(["1-1"]);
    // x is done: y's next events no longer wait for it.
    batcher.finished("x");
    expect(await batcher.send(to("y"), 2, token("y2"))).toBe(1);
    batcher.finished("y");
    await received(1);
  });

  it("goes after the window when another request sends nothing", async () => {
    const batcher = new EventBatcher(publisher, 20);
    await batcher.send(to("p"), 1, token("p1"));
    const started = performance.now();
    expect(await batcher.send(to("q"), 1, token("q1"))).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    batcher.finished("p");
    batcher.finished("q");
    await received(2);
  });

  it("sends each event to its request's route, one message per API process", async () => {
    const batcher = new EventBatcher(publisher, 60_000);
    // r was resumed on API b: its route names b's channel.
    await probe.set(routeKey("t", "r"), "t:reply:b");
    await batcher.send(to("r"), 1, token("r1"));
    const [alone] = await received(1);
    expect(alone!.channel).toBe("t:reply:b");
    const together = [batcher.send(to("s"), 1, token("s1")), batcher.send(to("u"), 1, token("u1"))];
    await batcher.send(to("r"), 2, token("r2"));
    await Promise.all(together);
    const got = await received(2);
    expect(got.map((m) => [m.channel, decodeMessages(m.message).map((e) => e.id)]).sort()).toEqual([
      ["t:reply:a", ["s", "u"]],
      ["t:reply:b", ["r"]],
    ]);
    for (const id of ["r", "s", "u"]) batcher.finished(id);
  });

  it("fails only the event its log refuses, and sends the others", async () => {
    const batcher = new EventBatcher(publisher, 60_000);
    await sendEvent(publisher, to("dup"), 1, token("first"));
    await batcher.send(to("w"), 1, token("w1"));
    await received(2);
    // With w streaming, these wait for w's next event, then go with it.
    const waiting = [batcher.send(to("dup"), 1, token("again")), batcher.send(to("fine"), 1, token("f1"))];
    await batcher.send(to("w"), 2, token("w2"));
    const [refused, sent] = await Promise.allSettled(waiting);
    expect(refused?.status).toBe("rejected");
    expect(sent).toEqual({ status: "fulfilled", value: 1 });
    expect((await received(1)).flatMap((m) => decodeMessages(m.message).map((e) => [e.id, e.seq]))).toEqual([
      ["fine", 1],
      ["w", 2],
    ]);
    batcher.finished("dup");
    batcher.finished("fine");
    // Events without a log (a request that cannot be resumed) go too, and leave no log.
    const unlogged = [
      batcher.send(to("n1", "t:reply:a", 0), 1, token("n1")),
      batcher.send(to("n2", "t:reply:a", 0), 1, token("n2")),
    ];
    await batcher.send(to("w"), 3, token("w3"));
    await Promise.all(unlogged);
    expect((await received(1)).flatMap((m) => decodeMessages(m.message).map((e) => e.id))).toEqual(["n1", "n2", "w"]);
    expect(await probe.exists(eventLogKey("t", "n1"))).toBe(0);
    for (const id of ["w", "n1", "n2"]) batcher.finished(id);
  });

  it("keeps what waits within one event's size: a large event sends what waits first", async () => {
    const batcher = new EventBatcher(publisher, 60_000);
    const big = (c: string) => token(c.repeat(0.6 * MAX_EVENT_CHARS));
    await batcher.send(to("big-x"), 1, token("x1"));
    const y1 = batcher.send(to("big-y"), 1, big("y"));
    // x's next event would pass the size with y's waiting: y's goes alone, at once.
    const x2 = batcher.send(to("big-x"), 2, big("x"));
    expect(await y1).toBe(1);
    const y2 = batcher.send(to("big-y"), 2, token("y2"));
    expect(await Promise.all([x2, y2])).toEqual([1, 1]);
    const got = await received(3);
    expect(got.map((m) => decodeMessages(m.message).map((e) => `${e.id} ${e.seq}`))).toEqual([
      ["big-x 1"],
      ["big-y 1"],
      ["big-x 2", "big-y 2"],
    ]);
    for (const m of got) expect(m.message.length).toBeLessThan(MAX_EVENT_CHARS + 1_000);
    batcher.finished("big-x");
    batcher.finished("big-y");
  });

  it("sends a step's events once the next decode, queued before them, is on its way", async () => {
    const batcher = new EventBatcher(publisher, 60_000);
    const order: string[] = [];
    const sendScript = publisher.eval.bind(publisher);
    const spied = vi.spyOn(publisher, "eval").mockImplementation(((...args: Parameters<typeof sendScript>) => {
      order.push("script");
      return sendScript(...args);
    }) as typeof publisher.eval);
    try {
      await batcher.send(to("d1"), 1, token("a"));
      const d2 = batcher.send(to("d2"), 1, token("b"));
      // As a step goes: the engine queues the next decode (node-llama-cpp dispatches it on
      // setImmediate), then the last request's event completes the step.
      setImmediate(() => order.push("decode"));
      const d1 = batcher.send(to("d1"), 2, token("c"));
      expect(order).toEqual(["script"]);
      expect(await Promise.all([d1, d2])).toEqual([1, 1]);
      expect(order).toEqual(["script", "decode", "script"]);
      expect((await received(2)).map((m) => decodeMessages(m.message).map((e) => `${e.id} ${e.seq}`))).toEqual([
        ["d1 1"],
        ["d2 1", "d1 2"],
      ]);
    } finally {
      spied.mockRestore();
      batcher.finished("d1");
      batcher.finished("d2");
    }
  });

  it("reads a lone event and an array alike, and nothing from what is neither", () => {
    const one = JSON.stringify({ id: "a", seq: 1, ...token("x") });
    expect(decodeMessages(one)).toEqual([{ id: "a", seq: 1, ...token("x") }]);
    expect(decodeMessages(`[${one},${JSON.stringify({ id: "b", seq: 4, ...token("y") })}]`).map((m) => m.id)).toEqual([
      "a",
      "b",
    ]);
    expect(decodeMessages("not json")).toEqual([]);
    expect(decodeMessages('[{"id":1}]')).toEqual([]);
  });
});

function usage() {
  return { promptTokens: 1, completionTokens: 2 };
}
