import { beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { ServedModel, type ServingEvent } from "../../src/workers/served-model.js";
import type { EngineContext } from "../../src/workers/engine/engine.js";
import { deferred, FakeEngine, type FakeModel } from "../helpers/fake-engine.js";

describe("ServedModel", () => {
  let engine: FakeEngine;
  let events: ServingEvent[];

  const start = (adapterLoadsPerModel: number, maxAdapters = 8) =>
    ServedModel.start({
      engine,
      base: { id: "m", path: "m.gguf" },
      contextsPerModel: 1,
      sequencesPerContext: 3,
      expressSequences: 0,
      adapterSequences: 2,
      adapterContexts: 2,
      contextSize: 64,
      threads: 1,
      maxAdapters,
      adapterLoadsPerModel,
      adapterPath: async (key) => `/adapters/${key}`,
      log: createLogger("error", "test"),
      onEvent: (e) => events.push(e),
    });

  const types = () => events.map((e) => e.type);

  /** What a 1-token request on the context generates: the fake says which adapter it ran with. */
  async function generated(context: EngineContext): Promise<string> {
    let text = "";
    const request = { promptTokens: [1], sampling: { maxTokens: 1, temperature: 0, stop: [] } };
    await context.generate(request, new AbortController().signal, (t) => (text += t));
    return text;
  }

  beforeEach(() => {
    engine = new FakeEngine();
    events = [];
  });

  it("runs a request on the base context, or with its adapter on the contexts adapters share", async () => {
    const served = await start(4);
    const base = await served.lease();
    const adapted = await served.lease("a");
    expect(await generated(base.context)).toBe("base");
    expect(await generated(adapted.context)).toBe("/adapters/a");
    // The base context, then the adapters' two, made on the first adapter's load.
    expect(engine.models[0]!.contexts.map((c) => [c.sequences, c.adapters])).toEqual([
      [3, false],
      [2, true],
      [2, true],
    ]);
    const b = await served.lease("b");
    expect(await generated(b.context)).toBe("/adapters/b");
    expect(engine.models[0]!.contexts).toHaveLength(3);
    // What the worker's heartbeat advertises: 3 base sequences, 1 held; 2 × 2 for adapters, 2 held.
    expect(served.stats().freeSequences).toEqual({ base: 2, adapters: 2 });
    b.release();
    expect(served.stats().freeSequences).toEqual({ base: 2, adapters: 3 });
    expect(base.model).toBe(adapted.model);
    expect(served.stats()).toMatchObject({ generation: 0, adapterLoads: 2, adapters: ["a", "b"], requests: 2 });
    base.release();
    adapted.release();
    expect(served.stats().requests).toBe(0);
    expect(events).toMatchObject([
      { type: "adapter-loaded", baseModelId: "m", adapterKey: "a", generation: 0 },
      { type: "adapter-loaded", baseModelId: "m", adapterKey: "b", generation: 0 },
    ]);
    await served.close();
  });

  it("recycles the model object after N adapter loads, draining in-flight work before disposing it", async () => {
    const served = await start(2);
    const a = await served.lease("a");
    const b = await served.lease("b");
    const first = engine.models[0]!;
    // A third adapter would be the model object's third load: a fresh one takes over.
    const c = await served.lease("c");
    expect(engine.models).toHaveLength(2);
    expect(c.model).toBe(engine.models[1]);
    expect(events.find((e) => e.type === "model-recycled")).toEqual({
      type: "model-recycled",
      baseModelId: "m",
      generation: 1,
      previous: 0,
      adapterLoads: 2,
    });
    // New requests go to the new object, base ones included; a and b finish on the old one.
    const base = await served.lease();
    expect(base.model).toBe(engine.models[1]);
    expect(served.stats()).toMatchObject({
      generation: 1,
      adapterLoads: 1,
      draining: [{ generation: 0, requests: 2 }],
    });
    expect(first.disposed).toBe(false);
    const text: string[] = [];
    const request = { promptTokens: [1], sampling: { maxTokens: 1, temperature: 0, stop: [] } };
    await a.context.generate(request, new AbortController().signal, (t) => text.push(t));
    expect(text).toEqual(["/adapters/a"]);
    a.release();
    await Promise.resolve();
    expect(first.disposed).toBe(false);
    b.release();
    await until(() => first.disposed);
    expect(first.contexts.every((ctx) => ctx.disposed)).toBe(true);
    expect(engine.models[1]!.disposed).toBe(false);
    expect(types().filter((t) => t === "model-disposed")).toHaveLength(1);
    expect(served.stats().draining).toEqual([]);
    c.release();
    base.release();
    await served.close();
    expect(engine.models.every((m) => m.disposed)).toBe(true);
  });

  it("does not recycle for an adapter the model object already loaded", async () => {
    const served = await start(2, 1);
    for (const key of ["a", "b", "a", "b", "a"]) (await served.lease(key)).release();
    expect(engine.models).toHaveLength(1);
    expect(engine.adapters.map((a) => a.path)).toEqual(["a", "b", "a", "b", "a"].map((k) => `/adapters/${k}`));
    expect(served.stats()).toMatchObject({ generation: 0, adapterLoads: 2, adapters: ["a"] });
    await served.close();
  });

  it("renews once for concurrent requests that each need a new load", async () => {
    const served = await start(1);
    (await served.lease("a")).release();
    const gate = deferred();
    engine.hold = gate.promise;
    const leases = Promise.all(["b", "c", "b"].map((key) => served.lease(key)));
    gate.resolve();
    const held = await leases;
    // Generation 1 takes b; c then needs a third object.
    expect(engine.models).toHaveLength(3);
    expect(held.map((h) => (h.model as FakeModel).serial)).toEqual([1, 2, 1]);
    held.forEach((h) => h.release());
    await served.close();
  });

  it("goes on serving on the old model object when a fresh one cannot be loaded", async () => {
    const served = await start(1);
    (await served.lease("a")).release();
    engine.failLoads = 1;
    const b = await served.lease("b");
    expect(b.model).toBe(engine.models[0]);
    expect(served.stats()).toMatchObject({ generation: 0, adapterLoads: 2 });
    b.release();
    // The next one tries again.
    (await served.lease("c")).release();
    expect(served.stats()).toMatchObject({ generation: 1, adapterLoads: 1 });
    await served.close();
  });

  it("preloads on deploy and frees on undeploy once requests end", async () => {
    const served = await start(4);
    await served.preload("a");
    expect(served.stats()).toMatchObject({ adapters: ["a"], requests: 0 });
    const held = await served.lease("a");
    served.forget("a");
    expect(served.stats().adapters).toEqual(["a"]);
    held.release();
    expect(served.stats().adapters).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "adapter-evicted", adapterKey: "a", reason: "undeployed" });
    await served.close();
  });

  it("reports an adapter that cannot be loaded to its request only", async () => {
    const served = await start(4);
    engine.failing.add("/adapters/bad");
    await expect(served.lease("bad")).rejects.toMatchObject({
      code: "internal",
      message: expect.stringContaining("bad"),
    });
    expect(served.stats()).toMatchObject({ requests: 0, adapters: [], adapterLoads: 0 });
    (await served.lease()).release();
    await served.close();
  });
});

async function until(condition: () => boolean, timeoutMs = 2_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 1));
  }
}
