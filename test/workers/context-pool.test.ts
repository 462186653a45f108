import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext, EngineModel } from "../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import { ContextPool } from "../../src/workers/context-pool.js";
import { greedyText } from "../helpers/oracle.js";
import { testModelDir } from "../helpers/test-models.js";

describe("ContextPool over real llama.cpp contexts", () => {
  let engine: LlamaEngine;
  let model: EngineModel;
  let contexts: EngineContext[];
  const served = [0, 0];

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    model = await engine.loadModel({
      id: "hearth-tiny",
      path: path.join(testModelDir, "hearth-tiny.gguf"),
      threads: 1,
    });
    contexts = [];
    for (let i = 0; i < 2; i++) {
      const context = await model.createContext({ sequences: 1, contextSize: 128, threads: 1 });
      // Count what each context is given.
      const generate = context.generate.bind(context);
      context.generate = (...args) => {
        served[i]!++;
        return generate(...args);
      };
      contexts.push(context);
    }
  });
  afterAll(async () => {
    await model?.dispose();
    await engine?.close();
  });

  it("spreads concurrent requests over its contexts and answers each correctly", async () => {
    const pool = new ContextPool(contexts);
    const prompts = ["one ", "two ", "three ", "four "];
    const texts = await Promise.all(
      prompts.map(async (prompt) => {
        let text = "";
        await pool.generate(
          { promptTokens: model.tokenize(prompt), sampling: { maxTokens: 16, temperature: 0, stop: [] } },
          new AbortController().signal,
          (t) => (text += t),
        );
        return text;
      }),
    );
    texts.forEach((text, i) => expect(text).toBe(greedyText(prompts[i]!, 16)));
    expect(served).toEqual([2, 2]);
    await pool.dispose();
  });
});
