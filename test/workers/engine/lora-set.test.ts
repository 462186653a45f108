import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../../src/domain/generation.js";
import type { EngineAdapter, EngineModel } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir } from "../../helpers/test-models.js";

const greedy = (maxTokens: number): Sampling => ({ maxTokens, temperature: 0, stop: [] });

/** What native work of the model ran when: llama.cpp reserves that read its adapters, and adapter loads and frees. */
interface Span {
  kind: "reserve" | "load" | "free";
  start: number;
  end: number;
}

interface NativeContext {
  decodeBatch(): Promise<unknown>;
  setLoras(loras: object[], scales: number[]): void;
}

interface ModelInternals {
  createContext(options: object): Promise<{ _ctx: NativeContext }>;
  _getOrLoadLora(path: string): Promise<{ dispose(): Promise<void> }>;
}

/**
 * The engine's guard over llama.cpp's set of a model's adapters (lora-set-guard.ts), against
 * real node-llama-cpp: contexts are created and disposed, adapters loaded and freed, and a
 * shared adapter context switches adapters, all at once; no adapter is loaded or freed while
 * a reserve runs (a context's creation, or its first decode after its adapters changed).
 * Without the guard the spans overlap within the first round; with it, every generation is
 * still its adapter's own.
 */
describe("the model's adapters against the graph reserves that read them", () => {
  let engine: LlamaEngine;
  let tiny: EngineModel;
  let dir: string;
  const spans: Span[] = [];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-lora-set-"));
    engine = await LlamaEngine.create();
    tiny = await engine.loadModel({ id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf"), threads: 1 });
    // The node-llama-cpp model under the engine's, its calls timed from below the guard.
    const model = (tiny as unknown as { model: ModelInternals }).model;
    const span = async <T>(kind: Span["kind"], work: () => Promise<T>): Promise<T> => {
      const s: Span = { kind, start: performance.now(), end: Number.POSITIVE_INFINITY };
      spans.push(s);
      try {
        return await work();
      } finally {
        s.end = performance.now();
      }
    };
    const createContext = model.createContext.bind(model);
    model.createContext = async (options) => {
      const context = await span("reserve", () => createContext(options));
      // Before the engine wraps them: a decode after setLoras reserves.
      const native = context._ctx;
      const [decodeBatch, setLoras] = [native.decodeBatch.bind(native), native.setLoras.bind(native)];
      let changed = false;
      Object.defineProperty(native, "setLoras", {
        configurable: true,
        value: (loras: object[], scales: number[]) => {
          changed = true;
          setLoras(loras, scales);
        },
      });
      Object.defineProperty(native, "decodeBatch", {
        configurable: true,
        value: () => {
          const reserves = changed;
          changed = false;
          return reserves ? span("reserve", decodeBatch) : decodeBatch();
        },
      });
      return context;
    };
    const getOrLoadLora = model._getOrLoadLora.bind(model);
    model._getOrLoadLora = async (file) => {
      const lora = await span("load", () => getOrLoadLora(file));
      const dispose = lora.dispose.bind(lora);
      Object.defineProperty(lora, "dispose", { configurable: true, value: () => span("free", dispose) });
      return lora;
    };
  });
  afterAll(async () => {
    await tiny?.dispose();
    await engine?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("never loads or frees an adapter during a reserve, and each adapter's output stays its own", async () => {
    const demo = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf", "adapter.gguf");
    const copies = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const file = path.join(dir, `copy-${i}.gguf`);
        await fs.copyFile(demo, file);
        return file;
      }),
    );
    const kept = await tiny.loadAdapter(demo);
    const shared = await tiny.createContext({ sequences: 4, contextSize: 256, threads: 1, adapters: true });
    const generate = async (prompt: string, adapter: EngineAdapter | undefined) => {
      let text = "";
      await shared.generate(
        { promptTokens: tiny.tokenize(prompt), sampling: greedy(12), ...(adapter ? { adapter } : {}) },
        new AbortController().signal,
        (t) => (text += t),
      );
      return text;
    };
    try {
      for (let round = 0; round < 3; round++) {
        const [texts] = await Promise.all([
          // Switches between the adapter and none: each first decode after one reserves.
          Promise.all(
            [kept, undefined, kept, undefined].map((adapter, i) => generate(`Round ${round}.${i} `, adapter)),
          ),
          // Contexts made and freed, each creation a reserve.
          ...[0, 1].map(async () => {
            const context = await tiny.createContext({ sequences: 1, contextSize: 128, threads: 1 });
            await context.dispose();
          }),
          // Adapters loaded and freed.
          ...copies.map(async (file) => {
            const adapter = await tiny.loadAdapter(file);
            await adapter.dispose();
          }),
        ]);
        expect(texts).toEqual(
          [true, false, true, false].map((adapter, i) => greedyText(`Round ${round}.${i} `, 12, { adapter })),
        );
      }
    } finally {
      await shared.dispose();
      await kept.dispose();
    }
    const reserves = spans.filter((s) => s.kind === "reserve");
    const writes = spans.filter((s) => s.kind !== "reserve");
    expect(reserves.length).toBeGreaterThan(6);
    expect(writes.filter((s) => s.kind === "free").length).toBe(13);
    const overlaps = writes.flatMap((w) =>
      reserves.filter((r) => r.start < w.end && w.start < r.end).map(() => `${w.kind} with a reserve`),
    );
    const writesTogether = writes.filter((a, i) => writes.some((b, j) => i < j && a.start < b.end && b.start < a.end));
    expect({ overlaps, writesTogether: writesTogether.length }).toEqual({ overlaps: [], writesTogether: 0 });
  });
});
