import { describe, expect, it } from "vitest";
import { TtlCache } from "../src/ttl-cache.js";

function clock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A loader that counts its calls and answers what `answer` says. */
function loader<V>(answer: (key: string) => V) {
  const calls: string[] = [];
  return {
    calls,
    load: (key: string) => async () => {
      calls.push(key);
      return answer(key);
    },
  };
}

describe("TtlCache", () => {
  it("answers from memory until the TTL has passed", async () => {
    const c = clock();
    const cache = new TtlCache<string, string>({ ttlMs: 100, maxEntries: 10, now: c.now });
    const l = loader((k) => `v-${k}`);
    expect(await cache.getOrLoad("a", l.load("a"))).toBe("v-a");
    c.advance(99);
    expect(await cache.getOrLoad("a", l.load("a"))).toBe("v-a");
    expect(l.calls).toEqual(["a"]);
    c.advance(1);
    expect(await cache.getOrLoad("a", l.load("a"))).toBe("v-a");
    expect(l.calls).toEqual(["a", "a"]);
  });

  it("keeps nothing with a TTL of 0", async () => {
    const cache = new TtlCache<string, string>({ ttlMs: 0, maxEntries: 10 });
    const l = loader((k) => k);
    await cache.getOrLoad("a", l.load("a"));
    await cache.getOrLoad("a", l.load("a"));
    expect(l.calls).toEqual(["a", "a"]);
    expect(cache.size).toBe(0);
  });

  it("does not keep failures: null results and errors", async () => {
    const cache = new TtlCache<string, string>({ ttlMs: 1_000, maxEntries: 10 });
    const l = loader(() => null);
    expect(await cache.getOrLoad("a", l.load("a"))).toBeNull();
    expect(await cache.getOrLoad("a", l.load("a"))).toBeNull();
    expect(l.calls).toHaveLength(2);
    await expect(cache.getOrLoad("b", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await cache.getOrLoad("b", async () => "fine")).toBe("fine");
    expect(cache.size).toBe(1);
  });

  it("holds at most maxEntries, dropping the least recently used", async () => {
    const cache = new TtlCache<string, string>({ ttlMs: 1_000, maxEntries: 2 });
    const l = loader((k) => k);
    await cache.getOrLoad("a", l.load("a"));
    await cache.getOrLoad("b", l.load("b"));
    await cache.getOrLoad("a", l.load("a")); // a is now the most recently used
    await cache.getOrLoad("c", l.load("c")); // pushes out b
    expect(cache.size).toBe(2);
    l.calls.length = 0;
    await cache.getOrLoad("a", l.load("a"));
    await cache.getOrLoad("c", l.load("c"));
    expect(l.calls).toEqual([]);
    await cache.getOrLoad("b", l.load("b"));
    expect(l.calls).toEqual(["b"]);
  });

  it("forgets on clear and deleteWhere", async () => {
    const cache = new TtlCache<string, { owner: string }>({ ttlMs: 1_000, maxEntries: 10 });
    for (const k of ["a", "b", "c"]) await cache.getOrLoad(k, async () => ({ owner: k === "c" ? "y" : "x" }));
    cache.deleteWhere((v) => v.owner === "x");
    expect(cache.size).toBe(1);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it("does not store a load that was under way when the cache was invalidated", async () => {
    const cache = new TtlCache<string, string>({ ttlMs: 1_000, maxEntries: 10 });
    let release!: (v: string) => void;
    const pending = cache.getOrLoad("a", () => new Promise<string>((r) => (release = r)));
    await Promise.resolve();
    cache.clear(); // the change happened while the (stale) read was in flight
    release("stale");
    expect(await pending).toBe("stale");
    expect(cache.size).toBe(0);
    expect(await cache.getOrLoad("a", async () => "fresh")).toBe("fresh");
  });
});
