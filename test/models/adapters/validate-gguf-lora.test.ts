import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertAddon, validateAddon, type AddonManifest } from "../../../src/models/adapters/index.js";
import { ggufLoraMetadata } from "../../../src/models/formats/gguf-lora.js";
import { gguf, type GgufValue } from "../../../src/models/formats/gguf-types.js";
import { writeGguf, type GgufTensorInput, type GgufWritableType } from "../../../src/models/formats/gguf-writer.js";
import {
  demoGgufDir,
  filesIn,
  randomMatrix,
  rejection,
  rewriteGguf,
  signedRandom,
  tinyBase,
} from "../../helpers/addon-fixtures.js";

const manifest: AddonManifest = {
  format: "gguf",
  baseModel: undefined,
  baseModelFrom: undefined,
  conversationConfig: undefined,
};
const limits = { maxRank: 32 };

let dir: string;
let tiedBase: string;
let cases = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-gguf-"));
  tiedBase = path.join(dir, "tied.gguf");
  await rewriteGguf(tinyBase, tiedBase, { tensors: (ts) => ts.filter((t) => t.name !== "output.weight") });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** lora_a [rank, n_in] and lora_b [n_out, rank] for a base tensor. */
function pair(
  target: string,
  rank: number,
  shape: [number, number],
  type: GgufWritableType = "F32",
  seed = 1,
): GgufTensorInput[] {
  const random = signedRandom(seed);
  const [out, inFeatures] = shape;
  return [
    { name: `${target}.lora_a`, type, shape: [rank, inFeatures], data: randomMatrix(random, rank, inFeatures, 0.1) },
    { name: `${target}.lora_b`, type, shape: [out, rank], data: randomMatrix(random, out, rank, 0.1) },
  ];
}

const metadata = (overrides: Record<string, GgufValue | undefined> = {}) => {
  const m: Record<string, GgufValue | undefined> = {
    ...ggufLoraMetadata({ architecture: "llama", name: "test", alpha: 8 }),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, GgufValue] => e[1] !== undefined));
};

async function adapter(tensors: GgufTensorInput[], meta = metadata()): Promise<Map<string, string>> {
  const d = await mkdtemp(path.join(dir, `case-${cases++}-`));
  await writeGguf(path.join(d, "adapter.gguf"), { metadata: meta, tensors });
  return filesIn(d, ["adapter.gguf"]);
}

async function problem(
  tensors: GgufTensorInput[],
  meta = metadata(),
  base = tinyBase,
  maxRank = limits.maxRank,
): Promise<string> {
  const error = await rejection(validateAddon(await adapter(tensors, meta), manifest, base, { maxRank }));
  expect(error).toMatchObject({ code: "invalid_request" });
  return error.message;
}

const q = pair("blk.0.attn_q.weight", 4, [320, 320]);

describe("validateAddon (GGUF)", () => {
  it("accepts the demo adapter and copies it as it is", async () => {
    const files = filesIn(demoGgufDir, ["adapter.gguf", "hearth.json"]);
    const plan = await validateAddon(files, manifest, tinyBase, limits);
    expect(plan).toEqual({
      format: "gguf",
      rank: 16,
      targets: ["output.weight"],
      architecture: "llama",
      alpha: 16,
      weights: [
        {
          target: "output.weight",
          source: { a: "output.weight.lora_a", b: "output.weight.lora_b" },
          rank: 16,
          inFeatures: 320,
          outFeatures: 257,
          bScale: 1,
          ropeHeads: null,
        },
      ],
    });
    const out = path.join(dir, "copied.gguf");
    await convertAddon(files, plan, out);
    expect(await readFile(out)).toEqual(await readFile(files.get("adapter.gguf")!));
  });

  it("accepts F16 and BF16 factors and several targets, in the base model's order", async () => {
    const files = await adapter([
      ...pair("output.weight", 2, [257, 320], "F16"),
      ...pair("blk.0.ffn_down.weight", 8, [320, 32], "F32"),
      ...q,
    ]);
    const plan = await validateAddon(files, manifest, tinyBase, limits);
    expect(plan.targets).toEqual(["blk.0.attn_q.weight", "blk.0.ffn_down.weight", "output.weight"]);
    expect(plan.rank).toBe(8);
    expect(plan.weights.map((w) => w.rank)).toEqual([4, 8, 2]);
  });

  describe("refuses", () => {
    it("a file that is not an adapter", async () => {
      expect(await problem(q, metadata({ "general.type": gguf.str("model") }))).toBe(
        'adapter.gguf: general.type is "model", not "adapter": this is not a LoRA adapter',
      );
      expect(await problem(q, metadata({ "general.type": undefined }))).toBe("adapter.gguf: missing general.type");
    });

    it("an adapter that is not a LoRA", async () => {
      expect(await problem(q, metadata({ "adapter.type": gguf.str("control_vector") }))).toBe(
        'adapter.gguf: adapter.type is "control_vector"; only "lora" adapters are supported',
      );
    });

    it("an activated LoRA (its invocation tokens need runtime support Hearth does not have)", async () => {
      expect(await problem(q, metadata({ "adapter.alora.invocation_tokens": gguf.i32s([1, 2]) }))).toBe(
        "adapter.gguf: activated LoRA adapters (adapter.alora.invocation_tokens) are not supported",
      );
    });

    it("another architecture than the base model's", async () => {
      expect(await problem(q, metadata({ "general.architecture": gguf.str("qwen2") }))).toBe(
        "adapter.gguf: general.architecture is qwen2, but the base model's is llama",
      );
    });

    it("an alpha llama.cpp cannot read", async () => {
      expect(await problem(q, metadata({ "adapter.lora.alpha": gguf.u32(8) }))).toBe(
        "adapter.gguf: adapter.lora.alpha must be a float32",
      );
      expect(await problem(q, metadata({ "adapter.lora.alpha": gguf.f32(NaN) }))).toBe(
        "adapter.gguf: adapter.lora.alpha is not a finite number",
      );
    });

    it("an alpha, a value or a scaled product past float16, which llama.cpp may compute in", async () => {
      const PAST = "past 65504, the largest float16 (llama.cpp may compute in it)";
      expect(await problem(q, metadata({ "adapter.lora.alpha": gguf.f32(1e38) }))).toMatch(
        /^adapter\.gguf: adapter\.lora\.alpha is 9\.99\d*e\+37, past 65504/,
      );
      const big = pair("blk.0.attn_q.weight", 4, [320, 320]);
      (big[1]!.data as Float32Array)[5] = 70_000;
      expect(await problem(big)).toBe(
        `adapter.gguf: tensor blk.0.attn_q.weight.lora_b holds a value of 7.00e+4, ${PAST}`,
      );
      // alpha 60,000 over rank 4, times rank 4 × max|A| × max|B| (about 0.1 each): about 600, accepted;
      // with factors of about 10 instead, about 6,000,000: refused.
      const accepted = await adapter(q, metadata({ "adapter.lora.alpha": gguf.f32(60_000) }));
      await expect(validateAddon(accepted, manifest, tinyBase, limits)).resolves.toMatchObject({ alpha: 60_000 });
      const loud = q.map((t) => ({ ...t, data: (t.data as Float32Array).map((v) => v * 100) }));
      expect(await problem(loud, metadata({ "adapter.lora.alpha": gguf.f32(60_000) }))).toMatch(
        /^adapter\.gguf: tensors blk\.0\.attn_q\.weight\.lora_b and blk\.0\.attn_q\.weight\.lora_a: scaled by 15000 \(adapter\.lora\.alpha over the rank\), their product may reach 5\.\d\de\+6, past 65504/,
      );
    });

    it("lora_a without lora_b and lora_b without lora_a", async () => {
      expect(await problem([q[0]!])).toBe(
        "adapter.gguf: tensor blk.0.attn_q.weight.lora_a has no matching blk.0.attn_q.weight.lora_b",
      );
      expect(await problem([q[1]!])).toBe(
        "adapter.gguf: tensor blk.0.attn_q.weight.lora_b has no matching blk.0.attn_q.weight.lora_a",
      );
    });

    it("tensors that are not LoRA factors", async () => {
      expect(await problem([...q, { name: "output.weight", type: "F32", shape: [4], data: new Float32Array(4) }])).toBe(
        "adapter.gguf: tensor output.weight is not a LoRA tensor (names end in .lora_a or .lora_b)",
      );
    });

    it("base tensors Hearth does not adapt", async () => {
      expect(await problem(pair("token_embd.weight", 4, [257, 320]))).toBe(
        "adapter.gguf: tensor token_embd.weight.lora_a adapts token_embd.weight, which Hearth cannot apply a LoRA to (supported: " +
          "blk.<i>.attn_q.weight, blk.<i>.attn_k.weight, blk.<i>.attn_v.weight, blk.<i>.attn_output.weight, " +
          "blk.<i>.ffn_gate.weight, blk.<i>.ffn_up.weight, blk.<i>.ffn_down.weight, output.weight)",
      );
    });

    it("a layer the base model does not have", async () => {
      expect(await problem(pair("blk.1.attn_v.weight", 4, [320, 320]))).toBe(
        "adapter.gguf: tensor blk.1.attn_v.weight.lora_a is for layer 1, but the base model has 1 layer (0 to 0)",
      );
    });

    it("output.weight on a base model with tied embeddings", async () => {
      expect(await problem(pair("output.weight", 4, [257, 320]), metadata(), tiedBase)).toMatch(
        /^adapter\.gguf: tensor output\.weight\.lora_a adapts lm_head, but the base model ties its output layer to its token embeddings/,
      );
    });

    it("tensor types other than F32, F16 and BF16", async () => {
      expect(await problem(pair("blk.0.attn_k.weight", 32, [320, 320], "Q8_0"))).toBe(
        "adapter.gguf: tensor blk.0.attn_k.weight.lora_a has type Q8_0; LoRA tensors must be F32, F16, BF16",
      );
    });

    it("shapes that do not fit the base weight (e.g. transposed factors)", async () => {
      const [a, b] = pair("blk.0.ffn_up.weight", 4, [32, 320]);
      expect(await problem([{ ...a!, shape: [320, 4], data: new Float32Array(1280) }, b!])).toBe(
        "adapter.gguf: tensor blk.0.ffn_up.weight.lora_a has shape [320, 4], expected [rank, 320] for blk.0.ffn_up.weight of shape [32, 320]",
      );
      expect(await problem([a!, { ...b!, shape: [4, 32], data: new Float32Array(128) }])).toBe(
        "adapter.gguf: tensor blk.0.ffn_up.weight.lora_b has shape [4, 32], expected [32, 4] for blk.0.ffn_up.weight of shape [32, 320] and rank 4",
      );
    });

    it("ranks above the limit", async () => {
      expect(await problem(pair("output.weight", 16, [257, 320]), metadata(), tinyBase, 8)).toBe(
        "adapter.gguf: tensor output.weight.lora_a: rank 16 is outside the accepted range, 1 to 8",
      );
    });

    it("non-finite values", async () => {
      const [a, b] = pair("blk.0.attn_output.weight", 4, [320, 320], "F16");
      (b!.data as Float32Array)[3] = Infinity;
      expect(await problem([a!, b!])).toBe(
        "adapter.gguf: tensor blk.0.attn_output.weight.lora_b holds a non-finite value (Infinity) at index 3",
      );
    });

    it("header fields past the adapter bounds, before reading them", async () => {
      expect(await problem(q, metadata({ "tokenizer.ggml.scores": gguf.f32s(new Array(70_000).fill(0)) }))).toBe(
        "adapter.gguf: length of tokenizer.ggml.scores 70000 exceeds the limit of 65536",
      );
      expect(await problem(q, metadata({ "general.description": gguf.str("d".repeat(1024 * 1024 + 1)) }))).toBe(
        "adapter.gguf: general.description is 1048577 bytes long (limit 1048576)",
      );
    });

    it("an adapter without tensors", async () => {
      expect(await problem([])).toBe("adapter.gguf: holds no LoRA tensors");
    });

    it("a file that is not GGUF", async () => {
      const files = await adapter(q);
      await writeFile(files.get("adapter.gguf")!, "PK\u0003\u0004 not a gguf file at all");
      expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toBe(
        "adapter.gguf: not a GGUF file (bad magic)",
      );
    });
  });
});
