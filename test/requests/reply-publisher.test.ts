import { afterEach, describe, expect, it, vi } from "vitest";
import { ReplyPublisher } from "../../src/requests/reply-publisher.js";
import { MAX_LOGPROB_TOKENS_PER_EVENT, type StreamEvent } from "../../src/requests/stream.js";

/** A send whose calls are recorded and settle only when the test says so. */
function handSend() {
  const calls: { event: StreamEvent; resolve: () => void; reject: (e: Error) => void }[] = [];
  const send = (event: StreamEvent) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ event, resolve, reject });
    });
  const sent = () => calls.map((c) => c.event);
  /** Settles every call so far, then lets the publisher react. */
  const settleAll = async (how: "resolve" | "reject" = "resolve") => {
    for (const c of calls) {
      if (how === "resolve") c.resolve();
      else c.reject(new Error("publish failed"));
    }
    await flush();
  };
  return { calls, send, sent, settleAll };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const token = (text: string, index = 0): StreamEvent => ({ type: "token", index, text });
const done: StreamEvent = {
  type: "done",
  choices: [{ index: 0, finishReason: "length" }],
  usage: { promptTokens: 3, completionTokens: 5 },
};

describe("ReplyPublisher", () => {
  it("keeps the later usage so far when it merges text (a request cut short is metered by it)", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    const counted = (
      text: string,
      completionTokens: number,
      type: "token" | "tool_arguments" = "token",
    ): StreamEvent =>
      type === "token"
        ? { type, index: 0, text, usage: { promptTokens: 4, cachedTokens: 0, completionTokens } }
        : { type, index: 0, call: 0, text, usage: { promptTokens: 4, cachedTokens: 0, completionTokens } };
    reply.publish(counted("a", 1));
    reply.publish(counted("b", 2));
    reply.publish(counted("c", 3));
    await wire.settleAll();
    reply.publish(counted("{", 4, "tool_arguments"));
    reply.publish(counted('"x', 5, "tool_arguments"));
    reply.publish(counted('":1}', 7, "tool_arguments"));
    await wire.settleAll();
    expect(wire.sent()).toEqual([
      counted("a", 1),
      counted("bc", 3),
      // Published while "bc" was in flight: merged, with the last one's usage.
      counted('{"x":1}', 7, "tool_arguments"),
    ]);
  });

  it("sends the first token at once, synchronously", () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("a"));
    expect(wire.sent()).toEqual([token("a")]);
  });

  it("sends every token at once while each publish completes before the next token", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    for (const text of ["a", "b", "c"]) {
      reply.publish(token(text));
      expect(wire.sent().at(-1)).toEqual(token(text));
      await wire.settleAll();
    }
    expect(wire.sent()).toEqual([token("a"), token("b"), token("c")]);
  });

  it("merges tokens' logprobs with their text, at most MAX_LOGPROB_TOKENS_PER_EVENT to an event", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    const logprob = (token: string, offset: number) => ({ token, bytes: null, logprob: -1, top: [], offset });
    const withLogprobs = (i: number): StreamEvent => ({
      type: "token",
      index: 0,
      text: `${i % 10}`,
      logprobs: [logprob(`${i % 10}`, i)],
    });
    const total = MAX_LOGPROB_TOKENS_PER_EVENT + 6;
    for (let i = 0; i < total; i++) reply.publish(withLogprobs(i));
    await wire.settleAll();
    await wire.settleAll();
    const sent = wire.sent() as Extract<StreamEvent, { type: "token" }>[];
    expect(sent.map((e) => e.logprobs!.length)).toEqual([1, MAX_LOGPROB_TOKENS_PER_EVENT, 5]);
    expect(sent.flatMap((e) => e.logprobs!.map((l) => l.offset))).toEqual([...Array(total).keys()]);
    expect(sent.map((e) => e.text).join("")).toBe(sent.flatMap((e) => e.logprobs!.map((l) => l.token)).join(""));
  });

  it("holds tokens while a publish is in flight, then sends them merged as one event", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("He"));
    reply.publish(token("ll"));
    reply.publish(token("o"));
    expect(wire.sent()).toEqual([token("He")]);
    wire.calls[0]!.resolve();
    await flush();
    expect(wire.sent()).toEqual([token("He"), token("llo")]);
  });

  it("sends done at once, right after the tokens held before it", () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("a"));
    reply.publish(token("b"));
    reply.publish(token("c"));
    expect(wire.sent()).toEqual([token("a")]);
    reply.publish(done);
    expect(wire.sent()).toEqual([token("a"), token("bc"), done]);
  });

  it("holds tokens until every send in flight has settled", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("a"));
    reply.publish(token("b", 1));
    reply.publish(done); // a, b and done in flight
    reply.publish(token("late"));
    wire.calls[0]!.resolve();
    wire.calls[1]!.resolve();
    await flush();
    expect(wire.sent()).toEqual([token("a"), token("b", 1), done]);
    wire.calls[2]!.resolve();
    await flush();
    expect(wire.sent()).toEqual([token("a"), token("b", 1), done, token("late")]);
  });

  it("merges only consecutive tokens of one choice: other choices keep their order", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("x", 0));
    for (const [text, index] of [
      ["a", 0],
      ["b", 0],
      ["c", 1],
      ["d", 1],
      ["e", 0],
      ["f", 1],
    ] as const) {
      reply.publish(token(text, index));
    }
    reply.publish(done);
    await wire.settleAll();
    expect(wire.sent()).toEqual([token("x", 0), token("ab", 0), token("cd", 1), token("e", 0), token("f", 1), done]);
  });

  it("keeps the text per choice and in total exactly as generated", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    const generated: StreamEvent[] = [];
    for (let i = 0; i < 200; i++) generated.push(token(`t${i};`, i % 7 < 5 ? 0 : 1));
    // Publishes settle every few tokens, at uneven points.
    for (const [i, event] of generated.entries()) {
      reply.publish(event);
      if (i % 3 === 0 || i % 11 === 0) await wire.settleAll();
    }
    reply.publish(done);
    for (let i = 0; i < 5; i++) await wire.settleAll();
    await reply.drained();
    const textOf = (events: StreamEvent[], index: number) =>
      events.map((e) => (e.type === "token" && e.index === index ? e.text : "")).join("");
    const sent = wire.sent();
    expect(sent.length).toBeLessThan(generated.length);
    expect(textOf(sent, 0)).toBe(textOf(generated, 0));
    expect(textOf(sent, 1)).toBe(textOf(generated, 1));
    expect(sent.at(-1)).toEqual(done);
    // Interleaving across choices is kept: collapsing runs of one index gives the same sequence.
    const runs = (events: StreamEvent[]) =>
      events.flatMap((e, i) => {
        const before = events[i - 1];
        return e.type === "token" && !(before?.type === "token" && before.index === e.index) ? [e.index] : [];
      });
    expect(runs(sent)).toEqual(runs(generated));
  });

  it("swallows a failed publish and still sends what follows, in order", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("a"));
    reply.publish(token("b"));
    reply.publish(token("c", 1));
    await wire.settleAll("reject");
    expect(wire.sent()).toEqual([token("a"), token("b"), token("c", 1)]);
    reply.publish(done);
    await wire.settleAll("reject");
    expect(wire.sent()).toEqual([token("a"), token("b"), token("c", 1), done]);
    reply.publish(token("late"));
    await wire.settleAll();
    expect(wire.sent()).toEqual([token("a"), token("b"), token("c", 1), done, token("late")]);
    await wire.settleAll();
    await expect(reply.drained()).resolves.toBeUndefined();
  });

  it("survives a send that throws instead of rejecting", async () => {
    const sent: StreamEvent[] = [];
    const reply = new ReplyPublisher((event) => {
      sent.push(event);
      if (event.type === "token" && event.text === "a") throw new Error("synchronous failure");
      return Promise.resolve();
    });
    expect(() => reply.publish(token("a"))).not.toThrow();
    reply.publish(token("b"));
    reply.publish(done);
    await reply.drained();
    expect(sent).toEqual([token("a"), token("b"), done]);
  });

  it("drains only once every held event has been sent and settled", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    reply.publish(token("a"));
    reply.publish(token("b"));
    let drained = false;
    void reply.drained().then(() => (drained = true));
    wire.calls[0]!.resolve();
    await flush();
    expect(wire.sent()).toEqual([token("a"), token("b")]);
    expect(drained).toBe(false);
    reply.publish(done);
    wire.calls[1]!.resolve();
    await flush();
    expect(drained).toBe(false);
    wire.calls[2]!.resolve();
    await flush();
    expect(drained).toBe(true);
    await expect(reply.drained()).resolves.toBeUndefined();
  });

  it("does not alter the events it is given", async () => {
    const wire = handSend();
    const reply = new ReplyPublisher(wire.send);
    const first = token("a");
    const second = token("b");
    const third = token("c");
    reply.publish(first);
    reply.publish(second);
    reply.publish(third);
    await wire.settleAll();
    expect([first, second, third]).toEqual([token("a"), token("b"), token("c")]);
  });

  describe("with a hold (an answer that is not streamed)", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A publisher holding 100 ms, on fake timers, that has sent its first token ("a"), settled. */
    async function pastFirstToken() {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const wire = handSend();
      const reply = new ReplyPublisher(wire.send, 100);
      reply.publish(token("a"));
      expect(wire.sent()).toEqual([token("a")]);
      await wire.settleAll();
      return { wire, reply };
    }

    it("sends the first token at once and the next ones together once the hold is over", async () => {
      const { wire, reply } = await pastFirstToken();
      for (const text of ["b", "c", "d"]) reply.publish(token(text));
      await vi.advanceTimersByTimeAsync(99);
      expect(wire.sent()).toEqual([token("a")]);
      await vi.advanceTimersByTimeAsync(1);
      expect(wire.sent()).toEqual([token("a"), token("bcd")]);
      await wire.settleAll();
      // The next tokens start another hold.
      reply.publish(token("e"));
      expect(wire.sent()).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(100);
      expect(wire.sent().at(-1)).toEqual(token("e"));
    });

    it("sends done at once, right after the tokens it held, and nothing after", async () => {
      const { wire, reply } = await pastFirstToken();
      reply.publish(token("b"));
      reply.publish(done);
      expect(wire.sent()).toEqual([token("a"), token("b"), done]);
      await wire.settleAll();
      await vi.advanceTimersByTimeAsync(500);
      expect(wire.sent()).toHaveLength(3);
      await reply.drained();
    });

    it("holds tokens that come while a send is in flight until it settles, as without a hold", async () => {
      const { wire, reply } = await pastFirstToken();
      reply.publish(token("b"));
      await vi.advanceTimersByTimeAsync(100);
      expect(wire.sent()).toEqual([token("a"), token("b")]);
      reply.publish(token("c"));
      reply.publish(token("d"));
      await vi.advanceTimersByTimeAsync(100);
      // "b" is still in flight: "cd" waits for it, then goes merged.
      expect(wire.sent()).toEqual([token("a"), token("b")]);
      await wire.settleAll();
      expect(wire.sent()).toEqual([token("a"), token("b"), token("cd")]);
    });

    it("sends at most one event per hold, however soon the sends before it settle", async () => {
      const { wire, reply } = await pastFirstToken();
      reply.publish(token("b"));
      await vi.advanceTimersByTimeAsync(100);
      expect(wire.sent()).toEqual([token("a"), token("b")]);
      // "c" comes while "b" is in flight, which settles 20 ms later: "c" still waits for its own hold.
      await vi.advanceTimersByTimeAsync(10);
      reply.publish(token("c"));
      await vi.advanceTimersByTimeAsync(10);
      await wire.settleAll();
      expect(wire.sent()).toEqual([token("a"), token("b")]);
      await vi.advanceTimersByTimeAsync(89);
      expect(wire.sent()).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(wire.sent()).toEqual([token("a"), token("b"), token("c")]);
    });
  });
});
