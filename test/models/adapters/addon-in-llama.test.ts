/**
 * The converter against llama.cpp itself: a PEFT adapter on hearth-tiny's attention
 * (q, k, v, o) and lm_head, converted by convertAddon and applied by llama.cpp as a LoRA,
 * must compute what the same adapter merged into the weights computes (merged here, in
 * the test, with the q/k row order of llama.cpp's HF→GGUF converter written
 * independently). hearth-tiny's attention weights are zero, so the adapter alone makes
 * the attention; with v and o non-zero its output enters the residual stream, and with
 * q and k non-zero the attention pattern depends on rotary positions, which is where a
 * missing row reorder shows.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { LlamaLogLevel, getLlama, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertAddon, validateAddon, type AddonPlan } from "../../../src/models/adapters/index.js";
import { readGgufHeader, readGgufTensor } from "../../../src/models/formats/gguf-reader.js";
import type { GgufTensorInput } from "../../../src/models/formats/gguf-writer.js";
import {
  N_EMBD,
  N_HEAD,
  N_VOCAB,
  hfToGgufRows,
  moduleOf,
  peftConfig,
  peftName,
  randomMatrix,
  rewriteGguf,
  signedRandom,
  tinyBase,
  writePeftFolder,
  type TensorSpec,
} from "../../helpers/addon-fixtures.js";

const THREADS = 1;
const TOKENS = 32;
const PROMPTS = ["The fire was lit", "Hello, hearth", "Once upon a time there", "kindling and logs", "q"];

// PEFT settings, with per-module patterns so the scale folding is exercised too.
const R = 8;
const ALPHA = 16;
const RANK_PATTERN = { lm_head: 4 };
const ALPHA_PATTERN = { v_proj: 8 };
/**
 * The adapted modules: rank, rows, the GGUF weight, and the amplitudes of A's and B's
 * uniform values, chosen for attention scores of a few units, an attention output about
 * as large as the residual stream, and an lm_head update that moves most greedy choices.
 */
const MODULES = [
  { kind: "q_proj", rank: R, out: N_EMBD, gguf: "blk.0.attn_q.weight", a: 0.2, b: 0.25 },
  { kind: "k_proj", rank: R, out: N_EMBD, gguf: "blk.0.attn_k.weight", a: 0.2, b: 0.25 },
  { kind: "v_proj", rank: R, out: N_EMBD, gguf: "blk.0.attn_v.weight", a: 0.2, b: 0.25 },
  { kind: "o_proj", rank: R, out: N_EMBD, gguf: "blk.0.attn_output.weight", a: 0.05, b: 0.05 },
  { kind: "lm_head", rank: RANK_PATTERN.lm_head, out: N_VOCAB, gguf: "output.weight", a: 0.1, b: 0.2 },
];

let dir: string;
let llama: Llama;
let base: LlamaModel;
let merged: LlamaModel;
const adapters: Record<"converted" | "unordered", string> = { converted: "", unordered: "" };

interface Step {
  token: number;
  probabilities: Float64Array;
}
/** Per prompt: greedy steps of the merged model, of the base with each adapter, and of the plain base. */
const runs = new Map<string, Record<"merged" | "converted" | "unordered" | "plain", Step[]>>();

/** PEFT's scale for a module: alpha_m / r_m. */
const peftScale = (kind: string) =>
  (kind === "v_proj" ? ALPHA_PATTERN.v_proj : ALPHA) / (kind === "lm_head" ? RANK_PATTERN.lm_head : R);

function peftTensors(): TensorSpec[] {
  const random = signedRandom(20261122);
  return MODULES.flatMap(({ kind, rank, a, b, out }) => [
    { name: peftName(moduleOf(kind), "A"), shape: [rank, N_EMBD], data: randomMatrix(random, rank, N_EMBD, a) },
    { name: peftName(moduleOf(kind), "B"), shape: [out, rank], data: randomMatrix(random, out, rank, b) },
  ]);
}

/** W + scale·B·A for every adapted weight, q and k rows in llama.cpp's order: the adapter merged into the model. */
async function writeMergedModel(file: string, tensors: TensorSpec[]): Promise<void> {
  const header = await readGgufHeader(tinyBase);
  const deltas = new Map<string, Float32Array>();
  for (const { kind, rank, out, gguf } of MODULES) {
    const a = tensors.find((t) => t.name === peftName(moduleOf(kind), "A"))!.data;
    const b = tensors.find((t) => t.name === peftName(moduleOf(kind), "B"))!.data;
    const scale = peftScale(kind);
    let delta: Float32Array = new Float32Array(out * N_EMBD);
    for (let i = 0; i < out; i++) {
      for (let j = 0; j < N_EMBD; j++) {
        let sum = 0;
        for (let k = 0; k < rank; k++) sum += b[i * rank + k]! * a[k * N_EMBD + j]!;
        delta[i * N_EMBD + j] = scale * sum;
      }
    }
    if (kind === "q_proj" || kind === "k_proj") delta = hfToGgufRows(delta, out, N_EMBD, N_HEAD);
    deltas.set(gguf, delta);
  }
  await rewriteGguf(tinyBase, file, {
    tensors: (list) =>
      list.map((t): GgufTensorInput => {
        const delta = deltas.get(t.name);
        if (delta === undefined) return t;
        const info = header.tensors.find((x) => x.name === t.name)!;
        return {
          ...t,
          data: async () => Float32Array.from(await readGgufTensor(tinyBase, info), (w, i) => w + delta[i]!),
        };
      }),
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-llama-"));
  const tensors = peftTensors();
  const files = await writePeftFolder(dir, {
    config: peftConfig({
      r: R,
      lora_alpha: ALPHA,
      rank_pattern: RANK_PATTERN,
      alpha_pattern: ALPHA_PATTERN,
      target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "lm_head"],
    }),
    tensors,
  });
  const plan = await validateAddon(
    files,
    { format: "peft", baseModel: undefined, baseModelFrom: undefined, conversationConfig: undefined },
    tinyBase,
    { maxRank: 16 },
  );
  adapters.converted = path.join(dir, "converted.gguf");
  await convertAddon(files, plan, adapters.converted);
  // The same conversion without the q/k row order, to show that it matters.
  const unordered: AddonPlan = { ...plan, weights: plan.weights.map((w) => ({ ...w, ropeHeads: null })) };
  adapters.unordered = path.join(dir, "unordered.gguf");
  await convertAddon(files, unordered, adapters.unordered);
  const mergedFile = path.join(dir, "merged.gguf");
  await writeMergedModel(mergedFile, tensors);

  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  base = await llama.loadModel({ modelPath: tinyBase });
  merged = await llama.loadModel({ modelPath: mergedFile });
  for (const prompt of PROMPTS) {
    runs.set(prompt, {
      merged: await generate(merged, undefined, prompt),
      converted: await generate(base, adapters.converted, prompt),
      unordered: await generate(base, adapters.unordered, prompt),
      plain: await generate(base, undefined, prompt),
    });
  }
});

afterAll(async () => {
  await merged?.dispose();
  await base?.dispose();
  await llama?.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** Greedy generation (end-of-text included, generation goes on) with each step's next-token distribution. */
async function generate(model: LlamaModel, adapter: string | undefined, prompt: string): Promise<Step[]> {
  const context: LlamaContext = await model.createContext({
    contextSize: 256,
    threads: THREADS,
    // Float32 attention end to end: the CPU flash-attention kernel rounds to F16, which would
    // blur the comparison (to about 1e-3 in log-probability).
    flashAttention: false,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    ...(adapter ? { lora: { adapters: [{ filePath: adapter, scale: 1 }] } } : {}),
  });
  try {
    const sequence = context.getSequence();
    const steps: Step[] = [];
    const options = { temperature: 0, yieldEogToken: true };
    for await (const item of sequence.evaluateWithMetadata(model.tokenize(prompt), { probabilities: true }, options)) {
      const probabilities = new Float64Array(N_VOCAB);
      for (const [token, p] of item.probabilities) probabilities[token] = p;
      steps.push({ token: item.token, probabilities });
      if (steps.length >= TOKENS) break;
    }
    return steps;
  } finally {
    await context.dispose();
  }
}

const tokens = (steps: Step[]) => steps.map((s) => s.token);

/** The largest |log p − log q| over the tokens p gives at least 1e-4. */
function logDifference(p: Float64Array, q: Float64Array): number {
  let max = 0;
  for (let i = 0; i < p.length; i++)
    if (p[i]! >= 1e-4) max = Math.max(max, Math.abs(Math.log(p[i]!) - Math.log(q[i]!)));
  return max;
}

const difference = (p: Float64Array, q: Float64Array) => p.reduce((max, v, i) => Math.max(max, Math.abs(v - q[i]!)), 0);

/** log(p1 / p2) of the two most likely tokens: the logit margin of the greedy choice. */
function margin(p: Float64Array): number {
  const [first, second] = [...p].sort((a, b) => b - a);
  return Math.log(first!) - Math.log(second!);
}

describe("a PEFT adapter converted by convertAddon, applied by llama.cpp", () => {
  it("generates greedily what the merged model generates", () => {
    for (const [prompt, run] of runs) {
      expect(run.merged, prompt).toHaveLength(TOKENS);
      expect(tokens(run.converted), prompt).toEqual(tokens(run.merged));
    }
  });

  it("gives the merged model's next-token distributions at every step, none of them a near-tie", () => {
    for (const [prompt, run] of runs) {
      for (const [i, step] of run.merged.entries()) {
        const what = `${JSON.stringify(prompt)} step ${i}`;
        expect(logDifference(step.probabilities, run.converted[i]!.probabilities), what).toBeLessThan(1e-4);
        expect(difference(step.probabilities, run.converted[i]!.probabilities), what).toBeLessThan(1e-5);
        // The greedy choice is decided by far more than that tolerance.
        expect(margin(step.probabilities), what).toBeGreaterThan(1e-3);
      }
    }
  });

  it("changes what the base model generates", () => {
    for (const [prompt, run] of runs) {
      expect(tokens(run.plain), prompt).not.toEqual(tokens(run.merged));
      expect(difference(run.plain[0]!.probabilities, run.merged[0]!.probabilities), prompt).toBeGreaterThan(0.05);
    }
  });

  it("needs the q/k row order: without it the attention, and so the logits, differ", () => {
    for (const [prompt, run] of runs) {
      const first = difference(run.unordered[0]!.probabilities, run.merged[0]!.probabilities);
      // One token attends to itself only, where the rotation cancels out: the order shows from the second position on.
      if (base.tokenize(prompt).length === 1) expect(first, prompt).toBeLessThan(1e-5);
      else expect(first, prompt).toBeGreaterThan(0.05);
    }
    expect([...runs.values()].some((run) => tokens(run.unordered).join() !== tokens(run.merged).join())).toBe(true);
  });
});
