import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../../src/domain/generation.js";
import { writeGgufLora } from "../../../src/models/formats/gguf-lora.js";
import { randomQvLoraModules } from "../../../src/models/factory/random-lora.js";
import { SPM_VOCAB_TINY_ID, spmVocabTinyShape } from "../../../src/models/factory/random-spm-llama.js";
import type { EngineAdapter, EngineContext, EngineModel, GenerateRequest } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { readGgufFileInfo } from "node-llama-cpp";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir, testSpmModelDir } from "../../helpers/test-models.js";

/** The GGUF keys of a llama model's shape that a KV cell's size comes from. */
interface LlamaShape {
  block_count: number;
  embedding_length: number;
  attention: { head_count: number; head_count_kv?: number };
}

const greedy = (maxTokens: number): Sampling => ({ maxTokens, temperature: 0, stop: [] });

/** Long enough that its cells matter, in spm-vocab-tiny's pieces. */
const system = "the cat sat on the mat, the fire burns on the hearth. ".repeat(6);

// Prompt caching against real node-llama-cpp. spm-vocab-tiny has random weights, so what it
// generates depends on every earlier token (checked below): a cell that is not what the prompt
// gives shows in the output. hearth-tiny's output is its bigram oracle's.
describe("prompt caching", () => {
  let engine: LlamaEngine;
  let spm: EngineModel;
  let tiny: EngineModel;
  let dir: string;
  const contexts: EngineContext[] = [];
  /** What a context that keeps no cells says: the output without any cache. */
  let uncached: EngineContext;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-prompt-cache-"));
    engine = await LlamaEngine.create();
    spm = await engine.loadModel({
      id: SPM_VOCAB_TINY_ID,
      path: path.join(testSpmModelDir, `${SPM_VOCAB_TINY_ID}.gguf`),
      threads: 1,
    });
    tiny = await engine.loadModel({ id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf"), threads: 1 });
    uncached = await contextOf(spm, { promptCacheTokens: 0 });
  });
  afterAll(async () => {
    for (const context of contexts) await context.dispose();
    await spm?.dispose();
    await tiny?.dispose();
    await engine?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function contextOf(
    model: EngineModel,
    options: { sequences?: number; promptCacheTokens?: number | null; adapters?: boolean } = {},
  ) {
    const context = await model.createContext({
      sequences: options.sequences ?? 2,
      contextSize: 512,
      threads: 1,
      promptCacheTokens: options.promptCacheTokens ?? null,
      adapters: options.adapters,
    });
    contexts.push(context);
    return context;
  }

  async function run(
    context: EngineContext,
    model: EngineModel,
    prompt: string,
    maxTokens = 60,
    extra: Partial<GenerateRequest> = {},
    signal = new AbortController().signal,
  ) {
    let text = "";
    const result = await context.generate(
      { promptTokens: model.tokenize(prompt), sampling: greedy(maxTokens), ...extra },
      signal,
      (t) => (text += t),
    );
    return { text, ...result };
  }

  const fresh = (prompt: string, maxTokens = 60, extra: Partial<GenerateRequest> = {}) =>
    run(uncached, spm, prompt, maxTokens, extra);

  it("generates what spm-vocab-tiny's earlier tokens make it generate (the check below can fail)", async () => {
    const a = await fresh(`${system}the fire`);
    const b = await fresh(`a cat${system.slice(7)}the fire`);
    expect(a.text).not.toBe(b.text);
    expect(a.cachedTokens).toBe(0);
    expect((await fresh(`${system}the fire`)).cachedTokens).toBe(0);
  });

  it("reuses a prefix, and says the same as without it", async () => {
    const context = await contextOf(spm);
    const first = await run(context, spm, `${system}the fire`);
    expect(first.cachedTokens).toBe(0);
    const prefix = spm.tokenize(system).length;
    for (const turn of ["a cat sat", "hearth", "the fire"]) {
      const prompt = `${system}${turn}`;
      const hit = await run(context, spm, prompt);
      expect(hit.cachedTokens, turn).toBeGreaterThanOrEqual(prefix);
      expect(hit.cachedTokens, turn).toBeLessThan(hit.promptTokens);
      expect(hit.text, turn).toBe((await fresh(prompt)).text);
    }
  });

  it("reuses a prompt and its answer for the next turn", async () => {
    const context = await contextOf(spm);
    const first = await run(context, spm, `${system}the cat`, 30);
    const next = `${system}the cat${first.text} on the mat`;
    const hit = await run(context, spm, next);
    // The answer's tokens as generated may not be the ones its text tokenizes to: at least the prompt is reused.
    expect(hit.cachedTokens).toBeGreaterThanOrEqual(spm.tokenize(`${system}the cat`).length - 1);
    expect(hit.text).toBe((await fresh(next)).text);
  });

  it("evaluates a prompt that diverges one token after the cached prefix from there", async () => {
    const context = await contextOf(spm);
    const cached = spm.tokenize(`${system}the fire burns`);
    await context.generate({ promptTokens: cached, sampling: greedy(5) }, new AbortController().signal, () => {});
    // One token differs, right after what is kept: the prompt's last few follow it.
    const at = cached.length - 5;
    const diverging = [...cached.slice(0, at), cached[at] === 5 ? 6 : 5, ...cached.slice(at + 1)];
    let text = "";
    const hit = await context.generate(
      { promptTokens: diverging, sampling: greedy(60) },
      new AbortController().signal,
      (t) => (text += t),
    );
    const withBos = hit.promptTokens - diverging.length;
    expect(hit.cachedTokens).toBe(at + withBos);
    let expected = "";
    await uncached.generate(
      { promptTokens: diverging, sampling: greedy(60) },
      new AbortController().signal,
      (t) => (expected += t),
    );
    expect(text).toBe(expected);
  });

  it("gives what hearth-tiny's oracle says on a hit", async () => {
    const context = await contextOf(tiny);
    const prompt = "Kindling and embers, the hearth keeps warm. ";
    expect((await run(context, tiny, prompt, 40)).text).toBe(greedyText(prompt, 40));
    const hit = await run(context, tiny, prompt, 40);
    expect(hit.cachedTokens).toBe(hit.promptTokens - 1);
    expect(hit.text).toBe(greedyText(prompt, 40));
  });

  it("reports the bytes its idle sequences hold: their cells at the KV cache's bytes a cell", async () => {
    // A cell of hearth-tiny: a key and a value of every KV head in every layer, in float16.
    const { metadata } = await readGgufFileInfo(path.join(testModelDir, "hearth-tiny.gguf"));
    const llama = (metadata as unknown as { llama: LlamaShape }).llama;
    const headDim = llama.embedding_length / llama.attention.head_count;
    const cellBytes =
      llama.block_count * (llama.attention.head_count_kv ?? llama.attention.head_count) * 2 * headDim * 2;
    let held = 0;
    const context = await tiny.createContext({
      sequences: 2,
      contextSize: 512,
      threads: 1,
      promptCacheTokens: null,
      onPromptCache: (sample) => (held += sample.heldBytes),
    });
    const prompt = "Kindling and embers, the hearth keeps warm. ";
    const first = await run(context, tiny, prompt, 10);
    // Its prompt and all but the last generated token (never evaluated) are kept.
    const cells = first.promptTokens + first.completionTokens - 1;
    expect(held).toBe(cells * cellBytes);
    // Taken by the next request, they are its own; kept again after it.
    await run(context, tiny, `${prompt}again`, 10);
    expect(held).toBeGreaterThan(cells * cellBytes);
    await context.dispose();
    expect(held).toBe(0);
  });

  it("keeps at most the bound, least recently used cut first, and reuses nothing at 0", async () => {
    const bounded = await contextOf(spm, { promptCacheTokens: 50 });
    const prompt = `${system}the fire`;
    await run(bounded, spm, prompt, 10);
    const hit = await run(bounded, spm, prompt);
    expect(hit.cachedTokens).toBe(50);
    expect(hit.text).toBe((await fresh(prompt)).text);

    const off = await contextOf(spm, { promptCacheTokens: 0 });
    await run(off, spm, prompt, 10);
    expect((await run(off, spm, prompt)).cachedTokens).toBe(0);
  });

  it("evicts the least recently used sequence's cells for a prompt that shares nothing, and stays right", async () => {
    const context = await contextOf(spm, { sequences: 2 });
    const a = `${system}the fire`;
    const b = `hearth fire burns. ${system}`;
    const c = `on a mat a cat sat. ${system}`;
    await run(context, spm, a, 10);
    await run(context, spm, b, 10);
    await run(context, spm, c, 10); // takes a's sequence, the least recently used
    const missed = await run(context, spm, a);
    expect(missed.cachedTokens).toBeLessThan(5);
    expect(missed.text).toBe((await fresh(a)).text);
    const hit = await run(context, spm, c);
    expect(hit.cachedTokens).toBeGreaterThan(spm.tokenize(c).length - 3);
    expect(hit.text).toBe((await fresh(c)).text);
  });

  it("serves two requests that share a prefix at once", async () => {
    const context = await contextOf(spm, { sequences: 3 });
    await run(context, spm, `${system}the cat`, 10);
    const [x, y] = await Promise.all([run(context, spm, `${system}the mat`), run(context, spm, `${system}a fire`)]);
    // One of them takes the cached sequence; the other evaluates its whole prompt on another.
    expect(Math.max(x.cachedTokens, y.cachedTokens)).toBeGreaterThanOrEqual(spm.tokenize(system).length);
    expect(Math.min(x.cachedTokens, y.cachedTokens)).toBe(0);
    expect(x.text).toBe((await fresh(`${system}the mat`)).text);
    expect(y.text).toBe((await fresh(`${system}a fire`)).text);
  });

  it("reuses a sequence while another generates, without waiting for it to end", async () => {
    const context = await contextOf(spm, { sequences: 2 });
    const prompt = `${system}the fire`;
    await run(context, spm, prompt, 10);
    let longEnded = false;
    const long = run(context, spm, "burns ", 400).then((r) => {
      longEnded = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const hit = await run(context, spm, prompt, 5);
    expect(longEnded).toBe(false);
    expect(hit.cachedTokens).toBe(hit.promptTokens - 1);
    expect(hit.text).toBe((await fresh(prompt, 5)).text);
    expect((await long).completionTokens).toBe(400);
  });

  it("leaves no cells a later request can hit from a request cancelled mid-prefill", async () => {
    const context = await contextOf(spm, { sequences: 1 });
    const long = `${system.repeat(4)}the fire`;
    const controller = new AbortController();
    const cancelled = run(context, spm, long, 60, {}, controller.signal);
    setImmediate(() => controller.abort());
    expect((await cancelled).finishReason).toBe("cancelled");
    const after = await run(context, spm, long);
    expect(after.cachedTokens).toBeLessThan(after.promptTokens);
    expect(after.text).toBe((await fresh(long)).text);
  });

  it("never lets an adapter's request hit the base model's cells or another adapter's", async () => {
    const adapters: EngineAdapter[] = [];
    for (const seed of [1, 2]) {
      const file = path.join(dir, `adapter-${seed}.gguf`);
      const modules = randomQvLoraModules(spmVocabTinyShape, { rank: 4, seed });
      await writeGgufLora(file, {
        architecture: "llama",
        name: `adapter-${seed}`,
        alpha: 8,
        weights: modules.map(({ module, pair }) => ({
          tensor: module.replace(/^model\.layers\.(\d+)\.self_attn\.([qv])_proj$/, "blk.$1.attn_$2.weight"),
          pair,
        })),
      });
      adapters.push(await spm.loadAdapter(file));
    }
    const prompt = `${system}the fire`;
    const reference = await contextOf(spm, { adapters: true, promptCacheTokens: 0 });
    const expected = await Promise.all(adapters.map((adapter) => run(reference, spm, prompt, 60, { adapter })));
    expect(expected[0]!.text).not.toBe(expected[1]!.text);
    expect(expected[0]!.text).not.toBe((await fresh(prompt)).text);

    const context = await contextOf(spm, { adapters: true, sequences: 3 });
    expect((await run(context, spm, prompt)).cachedTokens).toBe(0);
    for (const [i, adapter] of adapters.entries()) {
      const first = await run(context, spm, prompt, 60, { adapter });
      expect(first.cachedTokens, `adapter ${i}`).toBe(0);
      expect(first.text, `adapter ${i}`).toBe(expected[i]!.text);
    }
    for (const [i, adapter] of adapters.entries()) {
      const hit = await run(context, spm, prompt, 60, { adapter });
      expect(hit.cachedTokens, `adapter ${i}`).toBe(hit.promptTokens - 1);
      expect(hit.text, `adapter ${i}`).toBe(expected[i]!.text);
    }
  });
});
