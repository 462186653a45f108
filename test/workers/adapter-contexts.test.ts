import { beforeEach, describe, expect, it } from "vitest";
import { AdapterContexts, type AdapterEviction } from "../../src/workers/adapter-contexts.js";
import { deferred, FakeEngine, type FakeModel } from "../helpers/fake-engine.js";

describe("AdapterContexts", () => {
  let engine: FakeEngine;
  let model: FakeModel;
  let opened: string[];
  let evicted: [string, AdapterEviction][];

  const contexts = (max: number) =>
    new AdapterContexts(
      async (key) => {
        opened.push(key);
        // An adapter's requests as the model instance runs them: its weights on a shared context.
        const adapter = await model.loadAdapter(key);
        const shared = await model.createContext({ sequences: 1, contextSize: 64, threads: 1, adapters: true });
        return {
          contextSize: shared.contextSize,
          sequences: shared.sequences,
          generate: (request, signal, onText) => shared.generate({ ...request, adapter }, signal, onText),
          dispose: () => adapter.dispose(),
        };
      },
      max,
      { evicted: (key, reason) => evicted.push([key, reason]) },
    );

  beforeEach(async () => {
    engine = new FakeEngine();
    model = (await engine.loadModel({ id: "m", path: "m.gguf", threads: 1 })) as unknown as FakeModel;
    opened = [];
    evicted = [];
  });

  /** Acquires and releases at once: a request that has ended. */
  async function use(set: AdapterContexts, key: string) {
    (await set.acquire(key)).release();
  }

  it("evicts the least recently used idle context first", async () => {
    const set = contexts(2);
    await use(set, "a");
    await use(set, "b");
    await use(set, "a"); // a is now more recent than b
    await use(set, "c");
    expect(set.keys).toEqual(["a", "c"]);
    expect(evicted).toEqual([["b", "lru"]]);
    expect(engine.adapters.find((a) => a.path === "b")!.disposed).toBe(true);
    await use(set, "d");
    expect(set.keys).toEqual(["c", "d"]);
    expect(evicted).toEqual([
      ["b", "lru"],
      ["a", "lru"],
    ]);
  });

  it("never evicts a context a request holds: grows past the bound, then shrinks back", async () => {
    const set = contexts(1);
    const a = await set.acquire("a");
    const b = await set.acquire("b");
    expect(set.keys).toEqual(["a", "b"]);
    expect(evicted).toEqual([]);
    expect(engine.adapters.find((x) => x.path === "a")!.disposed).toBe(false);
    b.release();
    // b is idle but a is older and busy: the least recently used *idle* one goes.
    expect(set.keys).toEqual(["a"]);
    expect(evicted).toEqual([["b", "lru"]]);
    a.release();
    a.release(); // releasing twice counts once
    expect(set.leases).toEqual({ a: 0 });
    expect(set.keys).toEqual(["a"]);
  });

  it("loads an adapter once for any number of concurrent first uses", async () => {
    const set = contexts(4);
    const gate = deferred();
    engine.hold = gate.promise;
    const leases = Array.from({ length: 5 }, () => set.acquire("a"));
    expect(set.loads).toBe(1);
    expect(set.leases).toEqual({ a: 5 });
    gate.resolve();
    const held = await Promise.all(leases);
    expect(opened).toEqual(["a"]);
    expect(new Set(held.map((h) => h.context)).size).toBe(1);
    held.forEach((h) => h.release());
    expect(set.leases).toEqual({ a: 0 });
  });

  it("fails every waiter of a failed load, forgets it, and tries again next time", async () => {
    const set = contexts(4);
    engine.failing.add("a");
    const results = await Promise.allSettled([set.acquire("a"), set.acquire("a")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(set.keys).toEqual([]);
    expect(set.loads).toBe(0);
    engine.failing.delete("a");
    await use(set, "a");
    expect(opened).toEqual(["a", "a"]);
    expect(set.loads).toBe(1);
  });

  it("counts distinct adapters loaded, not contexts re-created", async () => {
    const set = contexts(1);
    await use(set, "a");
    await use(set, "b"); // evicts a
    expect(set.knows("a")).toBe(true);
    await use(set, "a"); // a new context, but llama.cpp still holds a's weights
    expect(opened).toEqual(["a", "b", "a"]);
    expect(set.loads).toBe(2);
  });

  it("frees an undeployed adapter once its requests end, and at once when idle", async () => {
    const set = contexts(4);
    const a = await set.acquire("a");
    await use(set, "b");
    set.forget("a");
    set.forget("b");
    set.forget("unknown");
    expect(evicted).toEqual([["b", "undeployed"]]);
    expect(set.keys).toEqual(["a"]);
    // A request already on its way still runs on it...
    const late = await set.acquire("a");
    a.release();
    expect(set.keys).toEqual(["a"]);
    late.release();
    // ...and the context goes when the last one ends.
    expect(evicted).toEqual([
      ["b", "undeployed"],
      ["a", "undeployed"],
    ]);
    expect(set.keys).toEqual([]);
  });

  it("keeps an undeployed adapter that is deployed again", async () => {
    const set = contexts(4);
    const a = await set.acquire("a");
    set.forget("a");
    (await set.acquire("a", { wanted: true })).release();
    a.release();
    expect(set.keys).toEqual(["a"]);
    expect(evicted).toEqual([]);
  });

  it("frees every context on dispose", async () => {
    const set = contexts(4);
    await use(set, "a");
    await use(set, "b");
    await set.dispose();
    expect(engine.adapters.every((a) => a.disposed)).toBe(true);
    expect(evicted.map(([, reason]) => reason)).toEqual(["closed", "closed"]);
  });
});
