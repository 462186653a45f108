/**
 * The benchmark models, built in a shrunken shape through the same code as the real ones
 * (the real shapes are checked from their plans, without writing 175 MB): the base model
 * passes Hearth's check, llama.cpp loads it and generates greedily without ending, the
 * PEFT adapters validate and convert, and llama.cpp applies them.
 */
import { createHash } from "node:crypto";
import { readFile, readdir, rm, truncate, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { LlamaLogLevel, getLlama, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBaseModelHeader, checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import {
  BENCH_LORA_ALPHA,
  BENCH_LORA_RANK,
  buildBenchModels,
  llama32_1bShape,
  smolLm135mShape,
  type BenchModels,
  type BenchShape,
} from "../../../src/models/factory/bench-models.js";
import { byteBpeVocab } from "../../../src/models/factory/byte-bpe-vocab.js";
import { convertAddon, readAddonManifest, validateAddon } from "../../../src/models/adapters/index.js";
import { readGgufHeader, type GgufHeader } from "../../../src/models/formats/gguf-reader.js";
import { ggmlTensorBytes } from "../../../src/models/formats/gguf-types.js";
import { gpt2ByteChars } from "../../../src/models/formats/gpt2-bytes.js";
import { tinyLlamaShape } from "../../helpers/bench-shapes.js";
import { randomLlamaPlan } from "../../../src/models/factory/random-llama.js";
import { randomQvLoraModules } from "../../../src/models/factory/random-lora.js";
import { readSafetensors } from "../../../src/models/formats/safetensors-reader.js";

const smallShape = tinyLlamaShape;
const small: BenchShape = { id: "bench-small", like: "no model", shape: smallShape };
const smallTied: BenchShape = { id: "bench-small-tied", like: "no model", shape: { ...smallShape, tiedOutput: true } };

const PROMPTS = ["The quick brown fox", "Hello, world", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"];
const TOKENS = 128;
/** <|endoftext|>, <|im_start|>, <|im_end|>. */
const SPECIAL = [256, 257, 258] as Token[];

let root: string;
let models: BenchModels;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-bench-"));
  models = await buildBenchModels(path.join(root, "a"), { shape: small, adapters: 3 });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

async function digests(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of await listFiles(dir))
    out[file] = createHash("sha256")
      .update(await readFile(path.join(dir, file)))
      .digest("hex");
  return out;
}

const adapterFiles = (dir: string) =>
  new Map(
    ["adapter_config.json", "adapter_model.safetensors", "hearth.json"].map((name) => [name, path.join(dir, name)]),
  );

/** A header as the reader would give it, from a plan: checks a shape without writing its weights. */
function planHeader(bench: BenchShape): GgufHeader {
  const plan = randomLlamaPlan({ name: bench.id, shape: bench.shape, seed: 1 });
  let offset = 0;
  const tensors = plan.tensors.map((t) => {
    const byteLength = ggmlTensorBytes(t.type, t.shape) as number;
    const info = { name: t.name, type: t.type, shape: [...t.shape], dims: [...t.shape].reverse(), offset, byteLength };
    offset += byteLength;
    return info;
  });
  return {
    version: 3,
    alignment: 32,
    metadata: new Map(Object.entries(plan.metadata)),
    tensors,
    dataOffset: 0,
    fileSize: offset,
  };
}

describe("the real shapes", () => {
  it("SmolLM-135M: 30 layers of the model's shapes, Q8_0, untied output, about 175 MB; passes the base-model check", () => {
    const header = planHeader(smolLm135mShape);
    const summary = checkBaseModelHeader(header, "smollm");
    expect(summary).toMatchObject({
      architecture: "llama",
      contextLength: 8192,
      embeddingLength: 576,
      blockCount: 30,
      headCount: 9,
      headCountKv: 3,
      feedForwardLength: 1536,
      vocabSize: 49152,
      tokenizerModel: "gpt2",
      hasChatTemplate: true,
    });
    const shapes = Object.fromEntries(header.tensors.map((t) => [t.name, t.shape]));
    expect(header.tensors).toHaveLength(2 + 30 * 9 + 1);
    expect(shapes).toMatchObject({
      "token_embd.weight": [49152, 576],
      "blk.29.attn_q.weight": [576, 576],
      "blk.29.attn_k.weight": [192, 576],
      "blk.29.attn_v.weight": [192, 576],
      "blk.29.attn_output.weight": [576, 576],
      "blk.29.ffn_gate.weight": [1536, 576],
      "blk.29.ffn_up.weight": [1536, 576],
      "blk.29.ffn_down.weight": [576, 1536],
      "output.weight": [49152, 576],
    });
    expect(new Set(header.tensors.map((t) => (t.shape.length === 1 ? "norm " : "") + t.type))).toEqual(
      new Set(["Q8_0", "norm F32"]),
    );
    expect(header.fileSize / 1e6).toBeGreaterThan(170);
    expect(header.fileSize / 1e6).toBeLessThan(180);
  });

  it("Llama-3.2-1B: 16 layers, 32/8 heads, tied output, about 1.3 GB; passes the base-model check", () => {
    const header = planHeader(llama32_1bShape);
    expect(checkBaseModelHeader(header, "llama")).toMatchObject({
      embeddingLength: 2048,
      blockCount: 16,
      headCount: 32,
      headCountKv: 8,
      feedForwardLength: 8192,
      vocabSize: 128256,
    });
    expect(header.tensors.find((t) => t.name === "output.weight")).toBeUndefined();
    expect(header.tensors.find((t) => t.name === "blk.15.attn_k.weight")?.shape).toEqual([512, 2048]);
    expect(header.fileSize / 1e9).toBeGreaterThan(1.2);
    expect(header.fileSize / 1e9).toBeLessThan(1.4);
  });

  it("SmolLM-135M's adapters: rank 16 on q_proj [576 out] and v_proj [192 out] of all 30 layers", () => {
    const modules = randomQvLoraModules(smolLm135mShape.shape, { rank: 16, seed: 0 });
    expect(modules).toHaveLength(60);
    expect(modules.slice(0, 2).map((m) => [m.module, m.pair.inFeatures, m.pair.outFeatures])).toEqual([
      ["model.layers.0.self_attn.q_proj", 576, 576],
      ["model.layers.0.self_attn.v_proj", 576, 192],
    ]);
  });

  it("a byte-level vocabulary of 49152 tokens: distinct, spelled with byte characters, each made by its merge", () => {
    const vocab = byteBpeVocab(49152);
    const ids = new Map(vocab.tokens.map((t, i) => [t, i]));
    expect(ids.size).toBe(49152);
    expect(vocab.tokens.slice(0, 256)).toEqual(gpt2ByteChars);
    expect(vocab.special).toEqual({ "<|endoftext|>": 256, "<|im_start|>": 257, "<|im_end|>": 258 });
    expect(vocab.tokenTypes.filter((t) => t === 3)).toHaveLength(3);
    const byteChars = new Set(gpt2ByteChars);
    expect(vocab.tokens.slice(259).filter((token) => ![...token].every((c) => byteChars.has(c)))).toEqual([]);
    expect(vocab.merges).toHaveLength(49152 - 259);
    // Merge i joins an earlier token and a byte into token 259 + i.
    const wrong = vocab.merges.filter((merge, i) => {
      const [left, right] = merge.split(" ") as [string, string];
      return !(ids.get(left)! < 259 + i && ids.get(right)! < 256 && ids.get(left + right) === 259 + i);
    });
    expect(wrong).toEqual([]);
  });
});

describe("buildBenchModels", () => {
  it("writes the documented layout", async () => {
    expect(await listFiles(models.dir)).toEqual([
      ...[0, 1, 2].flatMap((i) =>
        ["adapter_config.json", "adapter_model.safetensors", "hearth.json"].map(
          (f) => `adapters/bench-small-lora-${i}/${f}`,
        ),
      ),
      "bench-small.gguf",
    ]);
    expect(models).toMatchObject({ baseModelId: "bench-small", baseModelRef: "accounts/hearth/models/bench-small" });
    expect(models.adapterDirs).toEqual(
      [0, 1, 2].map((i) => path.join(models.dir, "adapters", `bench-small-lora-${i}`)),
    );
    expect(models.written).toHaveLength(4);
  });

  it("builds a base model that passes the base-model check", async () => {
    expect(await checkLlamaBaseModel(models.baseModel)).toMatchObject({
      architecture: "llama",
      name: "bench-small",
      vocabSize: 1024,
      blockCount: 2,
      headCountKv: 2,
    });
    const { metadata } = await readGgufHeader(models.baseModel);
    expect(metadata.get("general.description")?.value).toMatch(
      /^random weights in the shape of no model \(seed \d+\), for benchmarks only$/,
    );
  });

  it("writes distinct PEFT adapters with non-zero factors that name the base model", async () => {
    const bs: Float32Array[] = [];
    for (const dir of models.adapterDirs) {
      const config = JSON.parse(await readFile(path.join(dir, "adapter_config.json"), "utf8"));
      expect(config).toMatchObject({
        base_model_name_or_path: models.baseModelRef,
        r: BENCH_LORA_RANK,
        lora_alpha: BENCH_LORA_ALPHA,
        target_modules: ["q_proj", "v_proj"],
      });
      expect(JSON.parse(await readFile(path.join(dir, "hearth.json"), "utf8"))).toEqual({
        base_model: models.baseModelRef,
      });
      const { header, tensors } = await readSafetensors(path.join(dir, "adapter_model.safetensors"));
      expect(header.tensors).toHaveLength(2 * 2 * smallShape.blockCount);
      const b = tensors.get("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight")!;
      expect(header.tensors.find((t) => t.name.endsWith("layers.1.self_attn.v_proj.lora_B.weight"))?.shape).toEqual([
        64, 16,
      ]);
      expect(b.some((v) => v !== 0)).toBe(true);
      bs.push(b);
    }
    expect(bs[0]).not.toEqual(bs[1]);
  });

  it("gives the same bytes for the same shape, and skips what is built", async () => {
    const again = await buildBenchModels(path.join(root, "b"), { shape: small, adapters: 3 });
    expect(await digests(again.dir)).toEqual(await digests(models.dir));
    expect((await buildBenchModels(again.dir, { shape: small, adapters: 3 })).written).toEqual([]);
  });

  it("rebuilds a damaged base model with its adapters, and adds missing adapters", async () => {
    const dir = path.join(root, "c");
    const first = await buildBenchModels(dir, { shape: small, adapters: 1 });
    const digest = await digests(dir);
    await truncate(first.baseModel, 1000);
    expect((await buildBenchModels(dir, { shape: small, adapters: 1 })).written).toEqual([
      first.baseModel,
      first.adapterDirs[0],
    ]);
    expect(await digests(dir)).toEqual(digest);
    await rm(path.join(first.adapterDirs[0]!, "hearth.json"));
    const more = await buildBenchModels(dir, { shape: small, adapters: 2 });
    expect(more.written).toEqual(more.adapterDirs);
    // A rebuilt base takes the adapters beyond the count with it (they were made for the old one).
    const fewer = await buildBenchModels(dir, { shape: small, adapters: 1, force: true });
    expect(await readdir(path.join(dir, "adapters"))).toEqual([path.basename(fewer.adapterDirs[0]!)]);
  });
});

describe("in llama.cpp", () => {
  let llama: Llama;
  let base: LlamaModel;
  let tied: LlamaModel;
  const converted: string[] = [];

  beforeAll(async () => {
    for (const [i, dir] of models.adapterDirs.slice(0, 2).entries()) {
      const files = adapterFiles(dir);
      const manifest = await readAddonManifest(files);
      expect(manifest).toMatchObject({ format: "peft", baseModel: models.baseModelRef });
      const plan = await validateAddon(files, manifest, models.baseModel, { maxRank: 64 });
      expect(plan).toMatchObject({ rank: 16, alpha: BENCH_LORA_ALPHA });
      expect(plan.targets).toEqual([
        "blk.0.attn_q.weight",
        "blk.0.attn_v.weight",
        "blk.1.attn_q.weight",
        "blk.1.attn_v.weight",
      ]);
      converted.push(path.join(root, `converted-${i}.gguf`));
      await convertAddon(files, plan, converted[i]!);
    }
    const tiedModels = await buildBenchModels(path.join(root, "tied"), { shape: smallTied, adapters: 0 });
    llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    base = await llama.loadModel({ modelPath: models.baseModel });
    tied = await llama.loadModel({ modelPath: tiedModels.baseModel });
  });
  afterAll(async () => {
    await tied?.dispose();
    await base?.dispose();
    await llama?.dispose();
  });

  /** Greedy tokens (end-of-generation tokens included) and the first step's distribution. */
  async function generate(
    model: LlamaModel,
    prompt: string,
    adapter?: string,
  ): Promise<{ tokens: Token[]; first: Map<Token, number> }> {
    const context = await model.createContext({
      contextSize: 512,
      threads: 1,
      ...(adapter ? { lora: { adapters: [{ filePath: adapter, scale: 1 }] } } : {}),
    });
    try {
      const tokens: Token[] = [];
      let first = new Map<Token, number>();
      const steps = context
        .getSequence()
        .evaluateWithMetadata(
          model.tokenize(prompt, true),
          { probabilities: true },
          { temperature: 0, yieldEogToken: true },
        );
      for await (const step of steps) {
        if (tokens.length === 0) first = step.probabilities;
        tokens.push(step.token);
        if (tokens.length >= TOKENS) break;
      }
      return { tokens, first };
    } finally {
      await context.dispose();
    }
  }

  /** The largest |log p − log q| over the vocabulary. */
  function logDifference(p: Map<Token, number>, q: Map<Token, number>): number {
    let max = 0;
    for (const [token, pp] of p) max = Math.max(max, Math.abs(Math.log(pp) - Math.log(q.get(token) ?? 0)));
    return max;
  }

  it("reads the special tokens and the chat template", () => {
    expect(base.tokenize("<|im_start|>user", true)[0]).toBe(257);
    expect(SPECIAL.map((t) => base.isEogToken(t))).toEqual([true, false, true]);
    expect(base.fileInfo.metadata.tokenizer.chat_template).toContain("<|im_start|>");
  });

  it("tokenizes text into multi-byte tokens and detokenizes any token", () => {
    const tokens = base.tokenize("the quick brown fox");
    expect(tokens.length).toBeLessThan("the quick brown fox".length / 1.5);
    expect(base.detokenize(tokens)).toBe("the quick brown fox");
    expect(() => base.detokenize(Array.from({ length: 1024 }, (_, i) => i as Token))).not.toThrow();
  });

  it(`generates ${TOKENS} tokens greedily without an end-of-generation token, output tied or not`, async () => {
    for (const model of [base, tied]) {
      for (const prompt of PROMPTS) {
        const { tokens, first } = await generate(model, prompt);
        expect(tokens, prompt).toHaveLength(TOKENS);
        expect(
          tokens.filter((t) => model.isEogToken(t)),
          prompt,
        ).toEqual([]);
        // The special tokens' output rows are zero: equal logits (0), well below the greedy choice's.
        const special = SPECIAL.map((t) => first.get(t)!);
        expect(new Set(special).size, prompt).toBe(1);
        expect(Math.max(...first.values()) / special[0]!, prompt).toBeGreaterThan(1.5);
      }
    }
  });

  it("applies each converted adapter: the logits move, differently for each adapter", async () => {
    for (const prompt of PROMPTS) {
      const plain = await generate(base, prompt);
      const [one, two] = [await generate(base, prompt, converted[0]), await generate(base, prompt, converted[1])];
      expect(logDifference(plain.first, one!.first), prompt).toBeGreaterThan(0.03);
      expect(logDifference(plain.first, two!.first), prompt).toBeGreaterThan(0.03);
      expect(logDifference(one!.first, two!.first), prompt).toBeGreaterThan(0.03);
      expect(one!.tokens, prompt).toHaveLength(TOKENS);
    }
  });
});
