import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll } from "vitest";
import { buildBenchModels } from "../../src/models/factory/bench-models.js";
import { tinyLlamaShape } from "./bench-shapes.js";

/**
 * A model of the tiny random-weight shape, built in a folder of its own before the suite's tests
 * and loaded on one CPU thread; gone after them. Call in a describe block; the getter gives the
 * model once loaded.
 */
export function useTinyRandomModel(id: string): () => LlamaModel {
  let dir: string | undefined;
  let model: LlamaModel | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), `hearth-${id}-`));
    const built = await buildBenchModels(dir, { shape: { id, like: "no model", shape: tinyLlamaShape }, adapters: 0 });
    const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    model = await llama.loadModel({ modelPath: built.baseModel });
  });
  afterAll(async () => {
    await model?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!model) throw new Error("the tiny random model is not loaded yet");
    return model;
  };
}

/** `count` prompts of `length` distinct tokens: a random-weight model's answer depends on each token and its position. */
export function distinctPrompts(count: number, length: number): Token[][] {
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length }, (_, j) => ((i * 97 + j * 31 + 7) % 1000) as Token),
  );
}
