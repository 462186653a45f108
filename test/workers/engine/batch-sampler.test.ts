/**
 * The batch sampler (native/batch-sampler.cpp, batch-sampler.ts): the samplings of one step in
 * one native call give each sequence exactly the tokens it gets when sampled one call at a time,
 * greedy or seeded, on one thread or several; bad arguments are errors, not crashes; and a build
 * that does not fit this process is refused with the reason and the command that fixes it.
 *
 * `npm ci` builds it (`prepare`); in CI it must be there, so that every engine test exercises it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getLlama, type Llama, LlamaLogLevel, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBenchModels } from "../../../src/models/factory/bench-models.js";
import {
  BATCH_NO_TOKEN,
  BATCH_SAMPLER_BUILD_FILE,
  BATCH_SAMPLER_FILE,
  type BatchSampler,
  loadBatchSampler,
  PARALLEL_SAMPLING_MIN_VOCABULARY,
  samplingThreads,
} from "../../../src/workers/engine/batch-sampler.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { guardSampling } from "../../../src/workers/engine/sampling-guard.js";
import { wideVocabShape } from "../../helpers/bench-shapes.js";

const SEQUENCES = 16;
const TOKENS = 24;

describe("loading the batch sampler", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-batch-sampler-load-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A folder of builds, each with its record. */
  const builds = async (name: string, records: Record<string, object>) => {
    const folder = path.join(dir, name);
    for (const [binary, build] of Object.entries(records)) {
      await mkdir(path.join(folder, binary), { recursive: true });
      await writeFile(path.join(folder, binary, BATCH_SAMPLER_BUILD_FILE), JSON.stringify(build));
    }
    return folder;
  };
  const links = ["libllama.v0.4.0.so", "libggml-base.so"];
  const cudaLinks = ["libllama.cuda.v0.4.0.so", "libggml-base.so"];

  it("refuses a build that is not there, or for another node-llama-cpp, or linking libraries not loaded", async () => {
    const none = loadBatchSampler(
      path.join(dir, "absent"),
      () => links,
      () => "3.21.1",
    );
    expect(none.sampler).toBeUndefined();
    expect(none).toMatchObject({
      reason:
        "the batch sampler is not built: `npm run build:batch-sampler` builds it (a C++ compiler and git are needed)",
    });

    const older = await builds("older", { "prebuilt-linux-x64": { builtFor: "3.20.0", links } });
    expect(
      loadBatchSampler(
        older,
        () => links,
        () => "3.21.1",
      ),
    ).toMatchObject({
      sampler: undefined,
      reason: expect.stringContaining("prebuilt-linux-x64 was built for node-llama-cpp 3.20.0, this is 3.21.1"),
    });

    // Built for the CPU binary and the CUDA one; this process loaded neither's llama library.
    const elsewhere = await builds("elsewhere", {
      "prebuilt-linux-x64": { builtFor: "3.21.1", links },
      "prebuilt-linux-x64-cuda": { builtFor: "3.21.1", links: cudaLinks },
    });
    const vulkan = loadBatchSampler(
      elsewhere,
      () => ["libllama.vulkan.v0.4.0.so", "libggml-base.so"],
      () => "3.21.1",
    );
    expect(vulkan.sampler).toBeUndefined();
    expect(vulkan).toMatchObject({
      reason: expect.stringContaining("prebuilt-linux-x64 links libllama.v0.4.0.so, which"),
    });
    expect(vulkan).toMatchObject({
      reason: expect.stringContaining("prebuilt-linux-x64-cuda links libllama.cuda.v0.4.0.so"),
    });

    // The CUDA build's libraries are the ones loaded: that build is the one tried (its library is not there).
    expect(
      loadBatchSampler(
        elsewhere,
        () => cudaLinks,
        () => "3.21.1",
      ),
    ).toMatchObject({
      sampler: undefined,
      reason: expect.stringMatching(new RegExp(`prebuilt-linux-x64-cuda/${BATCH_SAMPLER_FILE} did not load`)),
    });
  });

  it("spreads a batch over threads only for a wide vocabulary on 4 cores or more", () => {
    const wide = PARALLEL_SAMPLING_MIN_VOCABULARY;
    expect(samplingThreads(16, 260, 16)).toBe(1);
    expect(samplingThreads(16, wide, 2)).toBe(1);
    expect(samplingThreads(16, wide, 16)).toBe(8);
    expect(samplingThreads(16, wide, 4)).toBe(2);
    expect(samplingThreads(3, wide, 16)).toBe(1);
    expect(samplingThreads(64, 151_936, 64)).toBe(8);
  });
});

describe("sampling a step's sequences in one native call", () => {
  let dir: string;
  let llama: Llama;
  let model: LlamaModel;
  let sampler: BatchSampler;
  const contexts: LlamaContext[] = [];
  /** Each native batch call's size. */
  const batches: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-batch-sampler-"));
    // A wide vocabulary: each sampling passes over 49 152 logits, as a real model's does.
    const built = await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 });
    llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    model = await llama.loadModel({ modelPath: built.baseModel });
    const loaded = loadBatchSampler();
    if (!loaded.sampler) throw new Error(`the batch sampler did not load: ${loaded.reason}`);
    const native = loaded.sampler;
    sampler = {
      sampleTokens(context, indexes, samplers, threads) {
        batches.push(indexes.length);
        return native.sampleTokens(context, indexes, samplers, threads);
      },
    };
  }, 120_000);
  afterAll(async () => {
    for (const context of contexts) await context.dispose();
    await model?.dispose();
    await llama?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** A context whose samplings go one call each (`threads` undefined) or batched on that many threads. */
  async function contextWith(threads: number | undefined): Promise<LlamaContext> {
    const context = await model.createContext({ contextSize: 64 * SEQUENCES, sequences: SEQUENCES, threads: 1 });
    guardSampling(context, threads === undefined ? undefined : { sampler, threads: () => threads });
    contexts.push(context);
    return context;
  }

  const prompts = Array.from({ length: SEQUENCES }, (_, i) => `Prompt ${i}: ${"xyz ".repeat(i % 5)}the end`);

  /** Each prompt's tokens, all generated at once, with the options of `optionsOf(i)`. */
  async function together(context: LlamaContext, optionsOf: (i: number) => Record<string, unknown>) {
    return Promise.all(
      prompts.map(async (prompt, i) => {
        const sequence = context.getSequence();
        try {
          const out: number[] = [];
          for await (const token of sequence.evaluate(model.tokenize(prompt), optionsOf(i))) {
            out.push(token);
            if (out.length >= TOKENS) break;
          }
          return out;
        } finally {
          await sequence.dispose();
        }
      }),
    );
  }

  it("gives every sequence the tokens it gets one call at a time, greedy and seeded, on 1 and 4 threads", async () => {
    const inTurn = await contextWith(undefined);
    const oneThread = await contextWith(1);
    const fourThreads = await contextWith(4);
    const greedy = () => ({ temperature: 0 });
    // Seeded sampling with a truncating chain and a repeat penalty: each sequence's own sampler state.
    const seeded = (i: number) => ({ temperature: 0.9, topK: 40, topP: 0.95, seed: 1000 + i, repeatPenalty: {} });
    for (const options of [greedy, seeded]) {
      const expected = await together(inTurn, options);
      expect(new Set(expected.map((tokens) => tokens.join(","))).size).toBeGreaterThan(1);
      batches.length = 0;
      expect(await together(oneThread, options)).toEqual(expected);
      expect(await together(fourThreads, options)).toEqual(expected);
      // The steps went as batches: most calls carried many sequences.
      expect(Math.max(...batches)).toBe(SEQUENCES);
      expect(batches.filter((size) => size > 1).length).toBeGreaterThan(TOKENS);
    }
  }, 180_000);

  it("answers bad arguments with an error, not a crash", async () => {
    const context = await contextWith(1);
    const native = (context as unknown as { _ctx: object })._ctx;
    const call = (...args: unknown[]) =>
      (sampler.sampleTokens as (...a: unknown[]) => Promise<unknown>)(...args) as Promise<unknown> | undefined;
    expect(() => call(native, [0], [], 1)).toThrow(/Int32Array/);
    expect(() => call(native, new Uint32Array(1), [], 1)).toThrow(/Int32Array/);
    expect(() => call(native, new Int32Array(2), [{}], 1)).toThrow(/differ in length/);
    expect(() => call({}, new Int32Array(0), [], 1)).toThrow();
    expect(await call(native, new Int32Array(0), [], 1)).toEqual({ tokens: new Int32Array(0), errors: [] });
    // An index no decode produced: llama.cpp has no logits there, so no token (what node-llama-cpp's own call answers).
    const Sampler = (llama as unknown as { _bindings: { AddonSampler: new (model: unknown) => object } })._bindings
      .AddonSampler;
    const native1 = new Sampler((model as unknown as { _model: unknown })._model);
    const result = (await call(native, Int32Array.of(4096), [native1], 1)) as { tokens: Int32Array };
    expect([...result.tokens]).toEqual([BATCH_NO_TOKEN]);
    (native1 as { dispose(): void }).dispose();
  });
});

describe("the engine", () => {
  it("loads the batch sampler where it is built, and samples one call each when told not to", async () => {
    for (const batchSampling of [true, false]) {
      const engine = await LlamaEngine.create({ gpu: "off", maxThreads: 1, nativeSampler: batchSampling });
      try {
        expect(engine.batchSampling, "npm ci builds the batch sampler (prepare)").toBe(batchSampling);
      } finally {
        await engine.close();
      }
    }
  }, 60_000);
});
