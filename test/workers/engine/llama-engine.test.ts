import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "../../../src/errors.js";
import { demoTables } from "../../../src/models/factory/demo-models.js";
import { gguf } from "../../../src/models/formats/gguf-types.js";
import { writeTinyLlama } from "../../../src/models/factory/tiny-llama.js";
import type { Sampling } from "../../../src/domain/generation.js";
import { renderDefaultChat } from "../../../src/workers/engine/default-chat-template.js";
import type { DecodeSample, EngineAdapter, EngineContext, EngineModel } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { writeGgufLora } from "../../../src/models/formats/gguf-lora.js";
import { argmaxFirst, createBigramOracle } from "../../helpers/bigram-oracle.js";
import { startLongGenerations } from "../../helpers/long-generations.js";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir } from "../../helpers/test-models.js";

const greedy = (maxTokens: number | null, extra: Partial<Sampling> = {}): Sampling => ({
  maxTokens,
  temperature: 0,
  stop: [],
  ...extra,
});

// The engine against real node-llama-cpp and the project's tiny models.
describe("LlamaEngine", () => {
  let engine: LlamaEngine;
  let tiny: EngineModel;
  let context: EngineContext;
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-engine-"));
    engine = await LlamaEngine.create();
    tiny = await engine.loadModel({ id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf"), threads: 1 });
    context = await tiny.createContext({ sequences: 2, contextSize: 256, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await tiny?.dispose();
    await engine?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function run(prompt: string, sampling: Sampling, signal = new AbortController().signal) {
    let text = "";
    const result = await context.generate(
      { promptTokens: tiny.tokenize(prompt), sampling },
      signal,
      (t) => (text += t),
    );
    return { text, ...result };
  }

  it("reports the model's shape", () => {
    expect(tiny.info).toEqual({
      trainContextLength: 2048,
      embeddingLength: 320,
      vocabularySize: 257,
      hasChatTemplate: false,
    });
    expect(context.contextSize).toBeGreaterThanOrEqual(256);
  });

  it("generates greedily what the bigram table predicts", async () => {
    const r = await run("Kindling ", greedy(50));
    expect(r.text).toBe(greedyText("Kindling ", 50));
    expect(r).toMatchObject({ finishReason: "length", promptTokens: 9, completionTokens: 50 });
  });

  it("stops before a stop string, even one split across tokens", async () => {
    const full = greedyText("Embers ", 60);
    const stop = full.slice(20, 24);
    const r = await run("Embers ", greedy(60, { stop: [stop] }));
    expect(r.text).toBe(full.slice(0, full.indexOf(stop)));
    expect(r.finishReason).toBe("stop");
  });

  it("refuses a request that cannot fit the context", async () => {
    await expect(run("x", greedy(10_000))).rejects.toMatchObject({
      code: "context_length_exceeded",
      param: "max_tokens",
    });
    await expect(run("x".repeat(400), greedy(1))).rejects.toMatchObject({
      code: "context_length_exceeded",
      param: "prompt",
    });
  });

  it("truncates a prompt too long for the context from its beginning when asked", async () => {
    const size = context.contextSize;
    const long = `${"x".repeat(size + 100)}The `;
    const truncate = { onContextOverflow: "truncate" as const };
    const cut = await run(long, greedy(10, truncate));
    expect(cut).toMatchObject({ text: greedyText("The ", 10), promptTokens: size - 10, finishReason: "length" });
    // With max_tokens null, the prompt's last half, and generation fills the rest.
    const open = await run(long, greedy(null, truncate));
    expect(open).toMatchObject({ promptTokens: Math.floor(size / 2), completionTokens: size - Math.floor(size / 2) });
    // A prompt that fits is read whole, and max_tokens past the context still cannot be met.
    expect(await run("The ", greedy(10, truncate))).toMatchObject({ promptTokens: 4, text: greedyText("The ", 10) });
    await expect(run("The ", greedy(size, truncate))).rejects.toMatchObject({ code: "context_length_exceeded" });
  });

  it("fills the context when max_tokens is null", async () => {
    const r = await run("ab", greedy(null));
    expect(r.completionTokens + r.promptTokens).toBe(context.contextSize);
  });

  it("stops within a token of a cancel", async () => {
    const controller = new AbortController();
    let pieces = 0;
    const result = await context.generate(
      { promptTokens: tiny.tokenize("Stop "), sampling: greedy(200) },
      controller.signal,
      () => {
        if (++pieces === 3) controller.abort();
      },
    );
    expect(result.finishReason).toBe("cancelled");
    expect(result.completionTokens).toBeLessThanOrEqual(4);
  });

  it("queues requests beyond its sequences and serves them all", async () => {
    const prompts = ["a ", "b ", "c ", "d ", "e "];
    const results = await Promise.all(prompts.map((p) => run(p, greedy(12))));
    results.forEach((r, i) => expect(r.text).toBe(greedyText(prompts[i]!, 12)));
  });

  /** Generations on a context of their own, and long ones (to the context's end) running on it. */
  async function busyContext(sequences: number, onDecode?: (d: DecodeSample) => void) {
    const context = await tiny.createContext({ sequences, contextSize: 256, threads: 1, onDecode });
    const gen = (prompt: string, maxTokens: number | null, onText: (t: string) => void = () => {}, express = false) =>
      context.generate(
        { promptTokens: tiny.tokenize(prompt), sampling: greedy(maxTokens), express },
        new AbortController().signal,
        onText,
      );
    const startLong = (prompts: string[]) => startLongGenerations(prompts, (p, onText) => gen(p, null, onText));
    return { context, gen, startLong };
  }

  it("starts a request at once while the context's other sequences keep generating", async () => {
    // Every sequence has been used before: a reused sequence must not wait for the others.
    const { context, gen, startLong } = await busyContext(4);
    try {
      await Promise.all(["w ", "x ", "y ", "z "].map((p) => gen(p, 4)));
      const long = await startLong(["a ", "b ", "c "]);
      const late = await gen("Late ", 5);
      const stillRunning = long.running();
      await long.ended;
      expect(late.completionTokens).toBe(5);
      expect(stillRunning).toBe(3);
    } finally {
      await context.dispose();
    }
  });

  it("hands a finished request's sequence to a waiting one while the others keep generating", async () => {
    // All 3 sequences busy; one ends, and the request waiting for a sequence must get its slot
    // then, not once the two long generations are done.
    const { context, gen, startLong } = await busyContext(3);
    try {
      const long = await startLong(["a ", "b "]);
      const short = gen("Short ", 3);
      const waiting = gen("Waiting ", 3); // no sequence free until `short` ends
      await short;
      const late = await waiting;
      const stillRunning = long.running();
      await long.ended;
      expect(late.completionTokens).toBe(3);
      expect(stillRunning).toBe(2);
    } finally {
      await context.dispose();
    }
  });

  it("gives a freed sequence to a waiting express request before the others waiting", async () => {
    // Both sequences taken; an ordinary request waits, then an express one: when the short
    // generation ends, its sequence goes to the express request, which came later.
    const { context, gen, startLong } = await busyContext(2);
    try {
      const long = await startLong(["a "]);
      const short = gen("Short ", 3);
      const firsts: string[] = [];
      const first = (name: string) => () => {
        if (!firsts.includes(name)) firsts.push(name);
      };
      const waiting = gen("Waiting ", 3, first("waiting"));
      let expressText = "";
      const express = gen(
        "Express ",
        6,
        (t) => {
          first("express")();
          expressText += t;
        },
        true,
      );
      await short;
      const [done] = await Promise.all([express, waiting]);
      await long.ended;
      expect(firsts).toEqual(["express", "waiting"]);
      expect(done.completionTokens).toBe(6);
      expect(expressText).toBe(greedyText("Express ", 6));
    } finally {
      await context.dispose();
    }
  });

  it("decodes an express request's prompt in a batch of its own while the others generate", async () => {
    // Its first token then waits for the decode in progress only, not for a step of every
    // sequence (and their samplings) with its prompt in it.
    const decodes: DecodeSample[] = [];
    const { context, gen, startLong } = await busyContext(5, (d) => decodes.push(d));
    try {
      const long = await startLong(["a ", "b ", "c ", "d "]);
      decodes.length = 0;
      let expressText = "";
      const express = await gen("An express prompt ", 6, (t) => (expressText += t), true);
      const running = long.running();
      await long.ended;
      expect(expressText).toBe(greedyText("An express prompt ", 6));
      expect(running).toBe(4);
      // The prompt's decode held it alone; the long generations' steps went on around it.
      expect(decodes.filter((d) => d.tokens === express.promptTokens)).toEqual([
        expect.objectContaining({ tokens: express.promptTokens, sequences: 1 }),
      ]);
      expect(decodes.some((d) => d.sequences >= 4 && d.tokens === d.sequences)).toBe(true);
    } finally {
      await context.dispose();
    }
  });

  it("gives every one of many concurrent sequences the model's own tokens", async () => {
    // node-llama-cpp samples a batch's sequences on parallel threads; unserialised, some of
    // these 100 generations took another sequence's token.
    const { context, gen } = await busyContext(20);
    try {
      const prompts = Array.from({ length: 20 }, (_, i) => `Prompt ${i}: the ${"abcdefghijklmnopqrst"[i]}`);
      for (let round = 0; round < 5; round++) {
        const texts = await Promise.all(
          prompts.map(async (p) => {
            let text = "";
            await gen(p, 24, (t) => (text += t));
            return text;
          }),
        );
        expect(texts).toEqual(prompts.map((p) => greedyText(p, 24)));
      }
    } finally {
      await context.dispose();
    }
  });

  it("reports every decode, and concurrent sequences share their generation steps", async () => {
    const decodes: DecodeSample[] = [];
    const observed = await tiny.createContext({
      sequences: 4,
      contextSize: 256,
      threads: 1,
      onDecode: (d) => decodes.push(d),
    });
    try {
      const prompts = ["p ", "q ", "r ", "s "];
      const results = await Promise.all(
        prompts.map(async (p) => {
          let text = "";
          const r = await observed.generate(
            { promptTokens: tiny.tokenize(p), sampling: greedy(16) },
            new AbortController().signal,
            (t) => (text += t),
          );
          return { text, ...r };
        }),
      );
      expect(results.map((r) => r.text)).toEqual(prompts.map((p) => greedyText(p, 16)));
      // Every token llama.cpp evaluated, once: each prompt, then each generated token but the last.
      const evaluated = results.reduce((sum, r) => sum + r.promptTokens + r.completionTokens - 1, 0);
      expect(decodes.reduce((sum, d) => sum + d.tokens, 0)).toBe(evaluated);
      // Whole steps: node-llama-cpp alone leaves one sequence a decode behind (3 of 4 a step).
      const steps = decodes.filter((d) => d.tokens === d.sequences);
      expect(steps.filter((d) => d.sequences === 4).length).toBeGreaterThanOrEqual(steps.length / 2);
      for (const d of decodes) expect(d.ms).toBeGreaterThanOrEqual(0);
      // A step that follows another says what came between: its samplings, and the time around them.
      expect(decodes.filter((d) => d.between && d.tokens !== d.sequences)).toEqual([]);
      const followed = steps.filter((d) => d.between !== undefined);
      expect(followed.length).toBeGreaterThanOrEqual(steps.length / 2);
      for (const { between } of followed) {
        expect(between!.beforeSamplingMs).toBeGreaterThanOrEqual(0);
        expect(between!.samplingMs).toBeGreaterThan(0);
        expect(between!.afterSamplingMs).toBeGreaterThanOrEqual(0);
      }
    } finally {
      await observed.dispose();
    }
  });

  /**
   * A context whose decodes are recorded, and greedy generation on it that resolves to the text.
   * Its steps go in one pass where their IDs allow (not a pass each where that measures faster).
   */
  async function observedContext(sequences: number, arrangeSteps: "measured" | "together" = "together") {
    const decodes: DecodeSample[] = [];
    const observed = await tiny.createContext({
      sequences,
      contextSize: 256,
      threads: 1,
      arrangeSteps,
      onDecode: (d) => decodes.push(d),
    });
    const generate = async (prompt: string, maxTokens: number) => {
      let text = "";
      await observed.generate(
        { promptTokens: tiny.tokenize(prompt), sampling: greedy(maxTokens) },
        new AbortController().signal,
        (t) => (text += t),
      );
      return text;
    };
    return { observed, decodes, generate };
  }

  /**
   * Six requests on a context of six sequences, `prompt(i)` each, those on IDs 0, 2 and 4 ending
   * first: the least recently used sequences are every other one.
   */
  const leaveEveryOtherIdlest = (
    generate: (prompt: string, maxTokens: number) => Promise<string>,
    prompt: (i: number) => string,
  ) => Promise.all([1, 30, 2, 30, 3, 30].map((tokens, i) => generate(prompt(i), tokens)));

  /** The steps of `sequences` sequences among `decodes`: many, and each in one pass. */
  function expectOnePassSteps(decodes: DecodeSample[], sequences: number) {
    const steps = decodes.filter((d) => d.tokens === d.sequences && d.sequences === sequences);
    expect(steps.length).toBeGreaterThan(10);
    expect(steps.map((d) => d.passes)).toEqual(steps.map(() => 1));
  }

  it("gives concurrent requests sequences side by side, and decodes each step in one pass", async () => {
    const { observed, decodes, generate } = await observedContext(6);
    try {
      // Six requests make the six sequences, leaving IDs 0, 2 and 4 the least recently used.
      await leaveEveryOtherIdlest(generate, (i) => `${"abcdef"[i]} `);
      decodes.length = 0;
      // Three prompts that share nothing with what the sequences hold: apart, each step took three passes.
      const prompts = ["Kettle ", "Ember ", "Tinder "];
      const texts = await Promise.all(prompts.map((p) => generate(p, 20)));
      expect(texts).toEqual(prompts.map((p) => greedyText(p, 20)));
      expectOnePassSteps(decodes, 3);
      const steps = decodes.filter((d) => d.tokens === d.sequences);
      expect(steps.map((d) => d.passes)).toEqual(steps.map(() => 1));
    } finally {
      await observed.dispose();
    }
  });

  it("gives requests of one prompt, which every idle sequence holds, sequences side by side", async () => {
    const { observed, decodes, generate } = await observedContext(6);
    try {
      // As above, the least recently used are IDs 0, 2 and 4; every sequence holds the prompt.
      await leaveEveryOtherIdlest(generate, () => "Hob ");
      decodes.length = 0;
      const texts = await Promise.all([0, 1, 2].map(() => generate("Hob ", 20)));
      expect(texts).toEqual([0, 1, 2].map(() => greedyText("Hob ", 20)));
      expectOnePassSteps(decodes, 3);
    } finally {
      await observed.dispose();
    }
  });

  it("decodes a step in sequence ID order, whatever order its requests came in", async () => {
    const { observed, decodes, generate } = await observedContext(3);
    try {
      const prompts = ["Kettle on the hob ", "Ember in the grate ", "Tinder in the box "];
      for (const p of prompts) await generate(p, 2);
      decodes.length = 0;
      // Each prompt goes back to the sequence that holds its start: the last made first, so the
      // three queue their decodes in the order of IDs 2, 1, 0 (three passes a step in that order).
      const next = [...prompts].reverse().map((p) => `${p}and more `);
      const texts = await Promise.all(next.map((p) => generate(p, 20)));
      expect(texts).toEqual(next.map((p) => greedyText(p, 20)));
      expectOnePassSteps(decodes, 3);
    } finally {
      await observed.dispose();
    }
  });

  it("tries a step of several sequences both ways, one pass and a pass each, and generates the same", async () => {
    const { observed, decodes, generate } = await observedContext(2, "measured");
    try {
      const prompts = ["Bellows ", "Flue "];
      const texts = await Promise.all(prompts.map((p) => generate(p, 24)));
      expect(texts).toEqual(prompts.map((p) => greedyText(p, 24)));
      const passes = decodes.filter((d) => d.tokens === d.sequences && d.sequences === 2).map((d) => d.passes);
      // Three steps in one pass first, then a pass each at least once (pass-planner.ts).
      expect(passes.slice(0, 4)).toEqual([1, 1, 1, 2]);
    } finally {
      await observed.dispose();
    }
  });

  it("serves several adapters and the base model from one context, each sequence with its own", async () => {
    const demo = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf", "adapter.gguf");
    const { base, shape, lora } = demoTables();
    const doubledFile = path.join(dir, "doubled.gguf");
    await writeGgufLora(doubledFile, {
      architecture: "llama",
      name: "hearth-tiny-lora-x2",
      alpha: lora.alpha * 2,
      weights: [{ tensor: "output.weight", pair: lora.pair }],
    });
    const doubledOracle = createBigramOracle({ table: base, shape, lora: { pair: lora.pair, alpha: lora.alpha * 2 } });
    const single = await tiny.loadAdapter(demo);
    const doubled = await tiny.loadAdapter(doubledFile);
    const decodes: DecodeSample[] = [];
    const shared = await tiny.createContext({
      sequences: 6,
      contextSize: 256,
      threads: 1,
      adapters: true,
      onDecode: (d) => decodes.push(d),
    });
    const generate = async (prompt: string, adapter: EngineAdapter | undefined) => {
      let text = "";
      await shared.generate(
        { promptTokens: tiny.tokenize(prompt), sampling: greedy(16), ...(adapter ? { adapter } : {}) },
        new AbortController().signal,
        (t) => (text += t),
      );
      return text;
    };
    const expected = (prompt: string, adapter: EngineAdapter | undefined) =>
      adapter === doubled
        ? doubledOracle.greedy(prompt, 16).text
        : greedyText(prompt, 16, adapter === single ? { adapter: true } : {});
    try {
      const plan = [single, doubled, undefined, single, doubled, undefined];
      for (let round = 0; round < 3; round++) {
        const prompts = plan.map((_, i) => `Round ${round}, ${"uvwxyz"[i]} `);
        const texts = await Promise.all(plan.map((adapter, i) => generate(prompts[i]!, adapter)));
        expect(texts).toEqual(plan.map((adapter, i) => expected(prompts[i]!, adapter)));
      }
      expect(new Set(plan.map((adapter) => expected("Kindling ", adapter))).size).toBe(3);
      // Each decode held the sequences of one adapter (or of none): two of the six at most.
      const steps = decodes.filter((d) => d.tokens === d.sequences);
      expect(Math.max(...steps.map((d) => d.sequences))).toBe(2);
      // An adapter freed while the others go on serving.
      await doubled.dispose();
      const after = await Promise.all([generate("after ", single), generate("after ", undefined)]);
      expect(after).toEqual([expected("after ", single), expected("after ", undefined)]);
    } finally {
      await shared.dispose();
      await single.dispose();
    }
  });

  it("refuses an adapter on a context not made for adapters", async () => {
    const demo = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf", "adapter.gguf");
    const adapter = await tiny.loadAdapter(demo);
    try {
      await expect(
        context.generate(
          { promptTokens: tiny.tokenize("a"), sampling: greedy(2), adapter },
          new AbortController().signal,
          () => {},
        ),
      ).rejects.toThrow(/not created to serve adapters/);
    } finally {
      await adapter.dispose();
    }
  });

  it("computes where HEARTH_GPU says: the CPU when off; a named backend this machine lacks fails at start", async () => {
    // The engine of these tests was made with gpu auto: on this machine, whatever it found.
    expect(["cpu", "cuda", "vulkan", "metal"]).toContain(engine.backend);
    const cpu = await LlamaEngine.create({ gpu: "off" });
    try {
      expect(cpu.backend).toBe("cpu");
    } finally {
      await cpu.close();
    }
    // Named: it runs on that backend, or refuses to start; never silently on the CPU.
    const named = await LlamaEngine.create({ gpu: "vulkan" }).then(
      async (vulkan) => {
        const backend = vulkan.backend;
        await vulkan.close();
        return backend;
      },
      (error: Error) => error.message,
    );
    expect(named === "vulkan" || /vulkan/i.test(named)).toBe(true);
  });

  it("leaves out tokens below min_p times the most likely one's probability", async () => {
    const expected = (await run("Min ", greedy(24))).text;
    const seeds = [1, 2, 3, 4, 5, 6];
    // Hot sampling wanders off the greedy path for some seed...
    const hot = await Promise.all(seeds.map((seed) => run("Min ", greedy(24, { temperature: 1.8, seed }))));
    expect(hot.some((r) => r.text !== expected)).toBe(true);
    // ...but min_p 1 keeps only the most likely token at each step, whatever the temperature.
    for (const seed of seeds) {
      expect((await run("Min ", greedy(24, { temperature: 1.8, seed, minP: 1 }))).text).toBe(expected);
    }
  });

  it("samples differently without a seed, even generations started together", async () => {
    // node-llama-cpp alone seeds every generation started in the same second alike.
    const unseeded = await Promise.all([1, 2].map(() => run("The ", greedy(40, { temperature: 1.5 }))));
    expect(unseeded[0]!.text).not.toBe(unseeded[1]!.text);
  });

  it("adds logit_bias to the logits: -100 bans a token, +100 forces it, the end of text included", async () => {
    const oracle = createBigramOracle({ table: demoTables().base, shape: demoTables().shape });
    // Greedy with 't' and 'h' banned, computed from the oracle's logits.
    const banned = new Set([116, 104]);
    let prev = 32;
    const expected: number[] = [];
    for (let i = 0; i < 20; i++) {
      const logits = oracle.logits(prev).map((l, token) => (banned.has(token) ? Number.NEGATIVE_INFINITY : l));
      prev = argmaxFirst(logits);
      expected.push(prev);
    }
    const bans = greedy(20, {
      logitBias: [
        [116, -100],
        [104, -100],
      ],
    });
    expect((await run("The ", bans)).text).toBe(Buffer.from(expected).toString());
    expect((await run("The ", greedy(20, { temperature: 1, seed: 1, logitBias: [[122, 100]] }))).text).toBe(
      "z".repeat(20),
    );
    // The end-of-text token (256), which node-llama-cpp's TokenBias.set would skip, can be forced too.
    expect(await run("The ", greedy(20, { logitBias: [[256, 100]] }))).toMatchObject({ text: "", completionTokens: 0 });
  });

  it("refuses token IDs outside the vocabulary with a 400 naming the field", async () => {
    const failure = (sampling: Sampling, promptTokens = [65]) =>
      context
        .generate({ promptTokens, sampling }, new AbortController().signal, () => {})
        .then(
          () => undefined,
          (e: unknown) => e as AppError,
        );
    expect(await failure(greedy(4, { logitBias: [[257, 5]] }))).toMatchObject({ status: 400, param: "logit_bias" });
    expect((await failure(greedy(4), [65, 300]))!.message).toMatch(/token 300.*0 to 256/);
    expect(await failure(greedy(4), [65, 300])).toMatchObject({ status: 400, param: "prompt" });
  });

  it("samples only from the locally typical set with typical_p", async () => {
    const oracle = createBigramOracle({ table: demoTables().base, shape: demoTables().shape });
    // The typical set after each byte, from the oracle (its definition, computed in float64 here).
    const typical = (prev: number, mass: number): Set<number> => {
      const logits = [...oracle.logits(prev)];
      const max = Math.max(...logits);
      const weights = logits.map((l) => Math.exp(l - max));
      const total = weights.reduce((a, b) => a + b, 0);
      const p = weights.map((w) => w / total);
      const entropy = -p.reduce((sum, q) => sum + (q > 0 ? q * Math.log(q) : 0), 0);
      const order = p
        .map((_, i) => i)
        .sort((a, b) => Math.abs(-Math.log(p[a]!) - entropy) - Math.abs(-Math.log(p[b]!) - entropy));
      const kept = new Set<number>();
      let sum = 0;
      for (const token of order) {
        kept.add(token);
        sum += p[token]!;
        if (sum > mass) break;
      }
      return kept;
    };
    const outside = (text: string, mass: number) => {
      const bytes = [32, ...Buffer.from(text)];
      return bytes.slice(1).filter((next, i) => !typical(bytes[i]!, mass).has(next)).length;
    };
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    const plain = await Promise.all(seeds.map((seed) => run("The ", greedy(40, { temperature: 1, seed }))));
    const filtered = await Promise.all(
      seeds.map((seed) => run("The ", greedy(40, { temperature: 1, seed, typicalP: 0.2 }))),
    );
    // Without it, plain sampling leaves the typical sets; with it, never.
    expect(plain.reduce((n, r) => n + outside(r.text, 0.2), 0)).toBeGreaterThan(0);
    for (const r of filtered) {
      expect([...r.text].every((ch) => ch.charCodeAt(0) < 128)).toBe(true);
      expect(outside(r.text, 0.2)).toBe(0);
    }
    // After a space the two likeliest bytes, 't' and 'a', are outside the typical set at 0.2.
    expect(filtered.some((r) => / [ta]/.test(r.text))).toBe(false);
    expect(new Set(filtered.map((r) => r.text)).size).toBeGreaterThan(1);
    // Reproducible with a seed, and within the context's other sequences' batches.
    const again = await run("The ", greedy(40, { temperature: 1, seed: 1, typicalP: 0.2 }));
    expect(again.text).toBe(filtered[0]!.text);
  });

  it("samples reproducibly with a seed", async () => {
    const sampling = greedy(30, { temperature: 1.2, seed: 42 });
    const a = await run("Seeded ", sampling);
    const b = await run("Seeded ", sampling);
    expect(a.text).toBe(b.text);
  });

  it("renders chats with Hearth's default template when the model has none", async () => {
    const messages = [{ role: "user" as const, content: "Hello" }];
    expect((await tiny.renderChat(messages)).tokens).toEqual([...Buffer.from(renderDefaultChat(messages))]);
    expect(renderDefaultChat(messages)).toBe("User: Hello\nAssistant:");
  });

  it("renders chats with the model's own template when it has one", async () => {
    const file = path.join(dir, "with-template.gguf");
    const template =
      "{% for message in messages %}<|{{ message.role }}|>{{ message.content }}\n{% endfor %}" +
      "{% if add_generation_prompt %}<|assistant|>{% endif %}";
    await writeTinyLlama(file, {
      table: demoTables().base,
      name: "with-template",
      extraMetadata: { "tokenizer.chat_template": gguf.str(template) },
    });
    const model = await engine.loadModel({ id: "with-template", path: file, threads: 1 });
    try {
      expect(model.info.hasChatTemplate).toBe(true);
      const conversation = [
        { role: "system" as const, content: "Be brief." },
        { role: "user" as const, content: "Hello" },
        { role: "assistant" as const, content: "Hi" },
        { role: "user" as const, content: "Fire?" },
      ];
      const expected = "<|system|>Be brief.\n<|user|>Hello\n<|assistant|>Hi\n<|user|>Fire?\n<|assistant|>";
      expect(Buffer.from((await model.renderChat(conversation)).tokens).toString()).toBe(expected);
      // The same template given as an adapter's renders in the sandbox, to the same tokens.
      expect(
        Buffer.from((await tiny.renderChat(conversation, { text: template, owner: "acct" })).tokens).toString(),
      ).toBe(expected);
    } finally {
      await model.dispose();
    }
  });

  it("fails a chat whose adapter template misbehaves with a 400, and goes on serving", async () => {
    const hi = [{ role: "user" as const, content: "hi" }];
    const loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{ messages }}";
    const failures = await Promise.all(
      [loop, "{{ raise_exception('no thanks') }}"].map((template) =>
        tiny.renderChat(hi, { text: template, owner: template }).then(
          () => undefined,
          (e: unknown) => e as AppError,
        ),
      ),
    );
    expect(failures[0]).toMatchObject({ status: 400, param: "messages" });
    expect(failures[0]!.message).toMatch(/went past its bounds.*(longer than 1000 ms|more than 64 MB of memory)/);
    expect(failures[1]!.message).toMatch(/failed on these messages: .*no thanks/);
    expect(
      (await tiny.renderChat(hi, { text: "{% for m in messages %}{{ m.content }}{% endfor %}", owner: "acct" })).tokens,
    ).toEqual([...Buffer.from("hi")]);
  });

  it("embeds as mean-pooled, unit-length vectors", async () => {
    const { vectors, promptTokens } = await tiny.embed(["aab", "b"], new AbortController().signal);
    expect(promptTokens).toBe(4);
    expect(vectors[0]).toHaveLength(320);
    // Mean pooling over one-hot byte features: "aab" is 2/3 'a' and 1/3 'b'.
    const a = vectors[0]![97]!;
    const b = vectors[0]![98]!;
    expect(a / b).toBeCloseTo(2, 3);
    expect(Math.hypot(...vectors[1]!)).toBeCloseTo(1, 5);
  });
});
