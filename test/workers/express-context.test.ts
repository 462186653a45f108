import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../src/domain/generation.js";
import type { DecodeSample, EngineModel } from "../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import { ExpressContext } from "../../src/workers/express-context.js";
import { ModelInstance } from "../../src/workers/model-instance.js";
import { startLongGenerations } from "../helpers/long-generations.js";
import { greedyText } from "../helpers/oracle.js";
import { testModelDir } from "../helpers/test-models.js";

const greedy = (maxTokens: number | null): Sampling => ({ maxTokens, temperature: 0, stop: [] });

// The express lane's context beside a base model's shared one, on real llama.cpp contexts of hearth-tiny.
describe("ExpressContext", () => {
  let engine: LlamaEngine;
  let model: EngineModel;
  let lane: ExpressContext | undefined;
  /** Each context's decodes: which context a request's prompt and steps went to. */
  const decodes = { shared: [] as DecodeSample[], express: [] as DecodeSample[] };

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    model = await engine.loadModel({
      id: "hearth-tiny",
      path: path.join(testModelDir, "hearth-tiny.gguf"),
      threads: 1,
    });
  });
  afterEach(async () => {
    await lane?.dispose();
    lane = undefined;
  });
  afterAll(async () => {
    await model?.dispose();
    await engine?.close();
  });

  async function open(sharedSequences: number, expressSequences: number): Promise<ExpressContext> {
    decodes.shared = [];
    decodes.express = [];
    const options = { contextSize: 256, threads: 1 };
    const shared = await model.createContext({
      ...options,
      sequences: sharedSequences,
      onDecode: (d) => decodes.shared.push(d),
    });
    const express = await model.createContext({
      ...options,
      sequences: expressSequences,
      onDecode: (d) => decodes.express.push(d),
    });
    lane = new ExpressContext(shared, express);
    return lane;
  }

  function gen(prompt: string, maxTokens: number | null, express = false, onText: (t: string) => void = () => {}) {
    return lane!.generate(
      { promptTokens: model.tokenize(prompt), sampling: greedy(maxTokens), express },
      new AbortController().signal,
      onText,
    );
  }

  const startLong = (prompts: string[]) => startLongGenerations(prompts, (p, onText) => gen(p, null, false, onText));

  it("runs an express request on its own context, never in a batch of the shared one's sequences", async () => {
    await open(3, 1);
    expect(lane!.sequences).toBe(3);
    const long = await startLong(["a ", "b ", "c "]);
    let text = "";
    const express = await gen("An express prompt ", 8, true, (t) => (text += t));
    const running = long.running();
    await long.ended;
    expect(text).toBe(greedyText("An express prompt ", 8));
    // It started and ended while every shared sequence was busy generating.
    expect(running).toBe(3);
    // Its prompt and each of its steps were decodes of the express context, one sequence each;
    // the shared context never held more than its own three.
    expect(decodes.express[0]).toMatchObject({ tokens: express.promptTokens, sequences: 1 });
    expect(decodes.express.slice(1).every((d) => d.tokens === 1 && d.sequences === 1)).toBe(true);
    expect(decodes.express.length).toBe(8);
    expect(decodes.shared.every((d) => d.sequences <= 3)).toBe(true);
    expect(decodes.shared.some((d) => d.tokens === express.promptTokens)).toBe(false);
  });

  it("sends an express request to the shared context when its own is full", async () => {
    await open(2, 1);
    let firstText = "";
    const first = gen("The first express ", 40, true, (t) => (firstText += t));
    let secondText = "";
    const second = await gen("The second ", 6, true, (t) => (secondText += t));
    await first;
    expect(secondText).toBe(greedyText("The second ", 6));
    expect(firstText).toBe(greedyText("The first express ", 40));
    expect(decodes.express.some((d) => d.tokens === second.promptTokens)).toBe(false);
    expect(decodes.shared[0]).toMatchObject({ tokens: second.promptTokens, sequences: 1 });
    // Its own is free again: the next express request goes there.
    const third = await gen("A third ", 4, true);
    expect(decodes.express.filter((d) => d.tokens === third.promptTokens)).toHaveLength(1);
  });

  it("keeps its own context for express requests: others wait for a shared sequence", async () => {
    await open(1, 1);
    const long = await startLong(["a "]);
    let waitingStarted = false;
    const waiting = gen("Waiting ", 3, false, () => (waitingStarted = true));
    await gen("Express ", 6, true);
    const whileLong = { running: long.running(), waitingStarted };
    await long.ended;
    expect((await waiting).completionTokens).toBe(3);
    expect(whileLong).toEqual({ running: 1, waitingStarted: false });
    expect(decodes.express.every((d) => d.sequences === 1)).toBe(true);
  });
});

// A model object as a worker holds it: HEARTH_EXPRESS_SEQUENCES gives its base model an express context.
describe("ModelInstance's express context", () => {
  let engine: LlamaEngine;
  beforeAll(async () => {
    engine = await LlamaEngine.create();
  });
  afterAll(async () => {
    await engine?.close();
  });

  it("runs express requests beside the shared context, its decodes marked for the metrics", async () => {
    const decodes: DecodeSample[] = [];
    const instance = await ModelInstance.create(
      {
        engine,
        base: { id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf") },
        contextsPerModel: 1,
        sequencesPerContext: 1,
        expressSequences: 1,
        adapterContexts: 1,
        adapterSequences: 1,
        contextSize: 256,
        threads: 1,
        maxAdapters: 1,
        adapterPath: () => Promise.reject(new Error("no adapters here")),
        onDecode: (d) => decodes.push(d),
      },
      1,
    );
    const lease = await instance.lease();
    try {
      const generate = (prompt: string, express: boolean) =>
        lease.context.generate(
          { promptTokens: lease.model.tokenize(prompt), sampling: greedy(6), express },
          new AbortController().signal,
          () => {},
        );
      // The shared context's one sequence busy, the express request still runs at once.
      const [other, express] = await Promise.all([generate("Another ", false), generate("Express ", true)]);
      expect(lease.context.sequences).toBe(1);
      expect(decodes.filter((d) => d.express)).toHaveLength(express.completionTokens);
      expect(decodes.filter((d) => !d.express)).toHaveLength(other.completionTokens);
      expect(decodes.find((d) => d.express)).toMatchObject({ tokens: express.promptTokens, sequences: 1 });
    } finally {
      lease.release();
      await instance.retire();
    }
  });
});
