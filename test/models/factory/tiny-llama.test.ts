/**
 * hearth-tiny under the real engine: node-llama-cpp (llama.cpp, CPU) must load it,
 * tokenize bytes as tokens, generate greedily exactly what the bigram oracle predicts,
 * accept the GGUF LoRA and move toward the adapter's oracle, and produce embeddings.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  LlamaCompletion,
  LlamaLogLevel,
  getLlama,
  type Llama,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BYTE_VOCAB_SIZE, buildBigramTable } from "../../../src/models/factory/bigram.js";
import { createBigramOracle, type BigramOracle } from "../../helpers/bigram-oracle.js";
import { buildDemoModels, demoTables, type DemoModels } from "../../../src/models/factory/demo-models.js";
import { decodeF16, encodeF16 } from "../../../src/models/formats/half-float.js";
import { dequantizeQ8_0, quantizeQ8_0 } from "../../../src/models/formats/q8-0.js";
import {
  hearthTinyShape,
  oneHotNormGain,
  outputWeightFromTable,
  writeTinyLlama,
} from "../../../src/models/factory/tiny-llama.js";
import { greedyTokens } from "../../helpers/greedy-tokens.js";

const PROMPTS = ["The ", "Hello", "café ", "Once upon a time", "fire\n", "日本語 ", "x"];
const TOKENS = 40;
// One thread: the model is tiny, and llama.cpp's default (at least 4 threads) spin-waits
// itself to a crawl on a 2-core machine running test files side by side.
const THREADS = 1;

let root: string;
let models: DemoModels;
let llama: Llama;
let model: LlamaModel;
let baseOracle: BigramOracle;
let loraOracle: BigramOracle;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-llama-"));
  models = await buildDemoModels(root);
  const tables = demoTables();
  baseOracle = createBigramOracle({ table: tables.base, shape: tables.shape });
  loraOracle = createBigramOracle({ table: tables.base, shape: tables.shape, lora: tables.lora });
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath: models.baseModel });
});

afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
  await rm(root, { recursive: true, force: true });
});

/** A text's tokens under hearth-tiny: its UTF-8 bytes. */
const bytesOf = (text: string) => [...Buffer.from(text, "utf8")] as Token[];

/** The engine's next-token distribution after a prompt (temperature 0 leaves the logits untouched). */
async function nextTokenProbabilities(context: LlamaContext, prompt: string): Promise<Float64Array> {
  const sequence = context.getSequence();
  try {
    const generator = sequence.evaluateWithMetadata(
      model.tokenize(prompt),
      { probabilities: true },
      { temperature: 0 },
    );
    const first = await generator.next();
    await generator.return();
    if (first.done) throw new Error("no token generated");
    const probs = new Float64Array(BYTE_VOCAB_SIZE);
    for (const [token, p] of first.value.probabilities) probs[token] = p;
    return probs;
  } finally {
    sequence.dispose();
  }
}

function softmax(logits: Float32Array): Float64Array {
  const max = Math.max(...logits);
  const exps = Float64Array.from(logits, (l) => Math.exp(l - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function expectDistributionsClose(engine: Float64Array, oracle: Float64Array): void {
  for (let t = 0; t < BYTE_VOCAB_SIZE; t++) {
    expect(Math.abs(engine[t]! - oracle[t]!)).toBeLessThan(1e-5);
    if (oracle[t]! > 1e-4) expect(Math.abs(Math.log(engine[t]!) - Math.log(oracle[t]!))).toBeLessThan(1e-3);
  }
}

describe("hearth-tiny in node-llama-cpp", () => {
  it("tokenizes UTF-8 byte by byte and round-trips it", () => {
    expect(model.tokens.shouldPrependBosToken).toBe(false);
    expect(model.tokens.bos).toBe(256);
    expect(model.tokens.eos).toBe(256);
    for (const text of [...PROMPTS, "naïve — 🔥 \t\r\n end", "<|endoftext|>"]) {
      expect(model.tokenize(text)).toEqual(bytesOf(text));
      expect(model.detokenize(bytesOf(text))).toBe(text);
    }
    expect(model.tokenize("<|endoftext|>", true)).toEqual([256]);
  });

  it("generates greedily exactly what the bigram oracle predicts", async () => {
    const context = await model.createContext({ contextSize: 256, threads: THREADS });
    try {
      for (const prompt of PROMPTS) {
        const expected = baseOracle.greedy(prompt, TOKENS);
        expect(await greedyTokens(model, context, prompt, TOKENS), prompt).toEqual(expected.tokens);
      }
    } finally {
      await context.dispose();
    }
  });

  it("gives LlamaCompletion the same text at temperature 0 (repeat penalty off: it is on by default)", async () => {
    const context = await model.createContext({ contextSize: 256, threads: THREADS });
    try {
      const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
      for (const prompt of ["The ", "Once upon a time"]) {
        const text = await completion.generateCompletion(prompt, {
          temperature: 0,
          maxTokens: TOKENS,
          repeatPenalty: false,
        });
        expect(text).toBe(baseOracle.greedy(prompt, TOKENS).text);
      }
    } finally {
      await context.dispose();
    }
  });

  it("computes the oracle's next-token distribution", async () => {
    const context = await model.createContext({ contextSize: 256, threads: THREADS });
    try {
      for (const prompt of ["The ", "q", "é"]) {
        const prev = bytesOf(prompt).at(-1)!;
        expectDistributionsClose(await nextTokenProbabilities(context, prompt), softmax(baseOracle.logits(prev)));
      }
    } finally {
      await context.dispose();
    }
  });

  it("breaks exact ties toward the lowest token id", async () => {
    // After "a", "b" and "x" are equally likely (same pair and unigram counts), in either order.
    for (const text of ["ab ax\n", "ax ab\n"]) {
      const table = buildBigramTable(text);
      const file = path.join(root, "ties.gguf");
      await writeTinyLlama(file, { table, name: "ties" });
      const tieModel = await llama.loadModel({ modelPath: file });
      try {
        const context = await tieModel.createContext({ contextSize: 64, threads: THREADS });
        const sequence = context.getSequence();
        const first = await sequence.evaluate(tieModel.tokenize("a"), { temperature: 0 }).next();
        expect(first.value).toBe("b".charCodeAt(0));
        expect(createBigramOracle({ table, shape: hearthTinyShape }).greedy("a", 1).text).toBe("b");
        await context.dispose();
      } finally {
        await tieModel.dispose();
      }
    }
  });

  it("reads F16 and Q8_0 tensors the way the writer encoded them", async () => {
    const { base, shape } = demoTables();
    const exact = outputWeightFromTable(base, shape);
    const stored = { F16: decodeF16(encodeF16(exact)), Q8_0: dequantizeQ8_0(quantizeQ8_0(exact)) };
    const g = oneHotNormGain(shape);
    const n = shape.embeddingLength;
    for (const weightType of ["F16", "Q8_0"] as const) {
      const file = path.join(root, `tiny-${weightType}.gguf`);
      await writeTinyLlama(file, { table: base, name: "typed", weightType });
      const typedModel = await llama.loadModel({ modelPath: file });
      try {
        const context = await typedModel.createContext({ contextSize: 64, threads: THREADS });
        for (const prompt of ["The ", "k"]) {
          const prev = bytesOf(prompt).at(-1)!;
          const expected = softmax(
            Float32Array.from({ length: BYTE_VOCAB_SIZE }, (_, next) => stored[weightType][next * n + prev]! * g),
          );
          const sequence = context.getSequence();
          const generator = sequence.evaluateWithMetadata(
            typedModel.tokenize(prompt),
            { probabilities: true },
            { temperature: 0 },
          );
          const first = await generator.next();
          await generator.return();
          sequence.dispose();
          if (first.done) throw new Error("no token generated");
          const engine = new Float64Array(BYTE_VOCAB_SIZE);
          for (const [token, p] of first.value.probabilities) engine[token] = p;
          // Q8_0 also stores the one-hot embedding (1.0 becomes 127·fp16(1/127)); RMSNorm absorbs that.
          for (let t = 0; t < BYTE_VOCAB_SIZE; t++)
            expect(Math.abs(engine[t]! - expected[t]!), `${weightType} ${t}`).toBeLessThan(5e-4);
        }
        await context.dispose();
      } finally {
        await typedModel.dispose();
      }
    }
  });

  it("applies the GGUF LoRA as the adapter oracle predicts", async () => {
    const context = await model.createContext({
      contextSize: 256,
      threads: THREADS,
      lora: { adapters: [{ filePath: models.ggufAdapter, scale: 1 }] },
    });
    try {
      let differs = 0;
      for (const prompt of PROMPTS) {
        const expected = loraOracle.greedy(prompt, TOKENS);
        expect(await greedyTokens(model, context, prompt, TOKENS), prompt).toEqual(expected.tokens);
        if (expected.text !== baseOracle.greedy(prompt, TOKENS).text) differs++;
      }
      expect(differs).toBeGreaterThan(0);
      expect(loraOracle.greedy("The ", TOKENS).text).not.toBe(baseOracle.greedy("The ", TOKENS).text);
      for (const prompt of ["The ", "s"]) {
        const prev = bytesOf(prompt).at(-1)!;
        expectDistributionsClose(await nextTokenProbabilities(context, prompt), softmax(loraOracle.logits(prev)));
      }
    } finally {
      await context.dispose();
    }
  });

  it("produces mean-pooled embeddings of n_embd values", async () => {
    const context = await model.createEmbeddingContext({ contextSize: 256, threads: THREADS });
    try {
      const text = "hearth";
      const { vector } = await context.getEmbeddingFor(text);
      expect(vector).toHaveLength(hearthTinyShape.embeddingLength);
      // Each token's final hidden state is a scaled one-hot vector: the mean pools byte counts.
      const counts = new Float64Array(vector.length);
      for (const b of bytesOf(text)) counts[b]! += 1;
      const cosine =
        vector.reduce((acc, v, i) => acc + v * counts[i]!, 0) /
        Math.sqrt(vector.reduce((acc, v) => acc + v * v, 0) * counts.reduce((acc, c) => acc + c * c, 0));
      expect(cosine).toBeGreaterThan(0.999);
    } finally {
      await context.dispose();
    }
  });
});
