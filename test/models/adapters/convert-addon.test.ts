import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertAddon, validateAddon, type AddonManifest, type AddonPlan } from "../../../src/models/adapters/index.js";
import { readGgufHeader, readGgufTensor } from "../../../src/models/formats/gguf-reader.js";
import { gguf, type GgufValue } from "../../../src/models/formats/gguf-types.js";
import { decodeBf16, decodeF16, encodeBf16, encodeF16 } from "../../../src/models/formats/half-float.js";
import {
  N_EMBD,
  N_HEAD,
  demoGgufDir,
  demoPeftDir,
  filesIn,
  hfToGgufRows,
  loraTensors,
  moduleOf,
  peftConfig,
  peftName,
  rewriteGguf,
  tinyBase,
  writePeftFolder,
  type TensorSpec,
} from "../../helpers/addon-fixtures.js";

const manifest: AddonManifest = {
  format: "peft",
  baseModel: undefined,
  baseModelFrom: undefined,
  conversationConfig: undefined,
};
const limits = { maxRank: 32 };

let dir: string;
let gqaBase: string;
let qwenBase: string;
let cases = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-convert-"));
  // hearth-tiny with one key-value head: k and v are [64, 320].
  gqaBase = path.join(dir, "gqa.gguf");
  await rewriteGguf(tinyBase, gqaBase, {
    metadata: (m) => ({ ...m, "llama.attention.head_count_kv": gguf.u32(1) }),
    tensors: (ts) =>
      ts.map((t) =>
        /attn_[kv]\.weight$/.test(t.name) ? { ...t, shape: [64, N_EMBD], data: new Float32Array(64 * N_EMBD) } : t,
      ),
  });
  // hearth-tiny relabelled as qwen2, whose converter keeps Hugging Face's row order.
  qwenBase = path.join(dir, "qwen2.gguf");
  await rewriteGguf(tinyBase, qwenBase, {
    metadata: (m) =>
      Object.fromEntries(
        Object.entries(m).map(([k, v]): [string, GgufValue] =>
          k === "general.architecture" ? [k, gguf.str("qwen2")] : [k.replace(/^llama\./, "qwen2."), v],
        ),
      ),
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function convert(
  config: Record<string, unknown>,
  tensors: TensorSpec[],
  base = tinyBase,
): Promise<{ plan: AddonPlan; out: string }> {
  const d = path.join(dir, `case-${cases++}`);
  await mkdir(d);
  const files = await writePeftFolder(d, { config, tensors });
  const plan = await validateAddon(files, manifest, base, limits);
  const out = path.join(d, "out.gguf");
  await convertAddon(files, plan, out);
  return { plan, out };
}

/** The output's tensors by name, as float32. */
async function tensorsOf(file: string): Promise<Map<string, Float32Array>> {
  const header = await readGgufHeader(file);
  const result = new Map<string, Float32Array>();
  for (const t of header.tensors) {
    expect(t.type).toBe("F32");
    result.set(t.name, await readGgufTensor(file, t));
  }
  return result;
}

const scaled = (values: Float32Array, factor: number) => Float32Array.from(values, (v) => v * factor);
const tensor = (tensors: TensorSpec[], name: string) => tensors.find((t) => t.name === name)!.data;

describe("convertAddon (PEFT → GGUF LoRA)", () => {
  it("turns the demo PEFT adapter into the demo GGUF adapter's tensors and metadata", async () => {
    const files = filesIn(demoPeftDir, ["adapter_config.json", "adapter_model.safetensors"]);
    const plan = await validateAddon(files, manifest, tinyBase, limits);
    const out = path.join(dir, "demo.gguf");
    await convertAddon(files, plan, out);
    const header = await readGgufHeader(out);
    expect(header.metadata.get("general.architecture")).toEqual(gguf.str("llama"));
    expect(header.metadata.get("general.type")).toEqual(gguf.str("adapter"));
    expect(header.metadata.get("adapter.type")).toEqual(gguf.str("lora"));
    expect(header.metadata.get("adapter.lora.alpha")).toEqual(gguf.f32(16));
    const demo = path.join(demoGgufDir, "adapter.gguf");
    const expected = await readGgufHeader(demo);
    expect(header.tensors.map((t) => [t.name, t.type, t.dims])).toEqual(
      expected.tensors.map((t) => [t.name, t.type, t.dims]),
    );
    for (const [i, t] of header.tensors.entries())
      expect(await readGgufTensor(out, t)).toEqual(await readGgufTensor(demo, expected.tensors[i]!));
  });

  it("is deterministic, and the plan survives JSON", async () => {
    const tensors = ["lm_head", "down_proj", "q_proj", "k_proj"].flatMap((kind, i) =>
      loraTensors(moduleOf(kind), 4, 10 + i, "BF16"),
    );
    const config = peftConfig({ use_rslora: true, alpha_pattern: { down_proj: 3 } });
    const first = await convert(config, tensors);
    const second = await convert(config, tensors);
    expect(await readFile(second.out)).toEqual(await readFile(first.out));
    const viaJson = path.join(dir, "via-json.gguf");
    const files = filesIn(path.dirname(first.out), ["adapter_config.json", "adapter_model.safetensors"]);
    await convertAddon(files, JSON.parse(JSON.stringify(first.plan)) as AddonPlan, viaJson);
    expect(await readFile(viaJson)).toEqual(await readFile(first.out));
  });

  it("folds rsLoRA's alpha/√r into B (llama.cpp applies alpha/r)", async () => {
    const tensors = loraTensors(moduleOf("v_proj"), 4, 3);
    const { plan, out } = await convert(peftConfig({ r: 4, lora_alpha: 8, use_rslora: true }), tensors);
    expect(plan.alpha).toBe(8);
    expect(plan.weights[0]!.bScale).toBe(2); // (8/√4) / (8/4)
    const written = await tensorsOf(out);
    expect(written.get("blk.0.attn_v.weight.lora_a")).toEqual(tensor(tensors, peftName(moduleOf("v_proj"), "A")));
    expect(written.get("blk.0.attn_v.weight.lora_b")).toEqual(
      scaled(tensor(tensors, peftName(moduleOf("v_proj"), "B")), 2),
    );
    expect((await readGgufHeader(out)).metadata.get("adapter.lora.alpha")).toEqual(gguf.f32(8));
  });

  it("applies rank_pattern and alpha_pattern per module, as PEFT matches them", async () => {
    const config = peftConfig({
      r: 4,
      lora_alpha: 8,
      rank_pattern: { "model.layers.0.self_attn.o_proj": 2, lm_head: 2 },
      alpha_pattern: { v_proj: 2, "layers.0.mlp.up_proj": 12, lm_head: 4 },
    });
    const tensors = [
      ...loraTensors(moduleOf("v_proj"), 4, 1),
      ...loraTensors(moduleOf("o_proj"), 2, 2),
      ...loraTensors(moduleOf("up_proj"), 4, 3),
      ...loraTensors(moduleOf("gate_proj"), 4, 4),
      ...loraTensors("lm_head", 2, 5),
    ];
    const { plan, out } = await convert(config, tensors);
    // PEFT's scale alpha_m / r_m; llama.cpp's 8 / rank; the ratio goes into B.
    const expected: Record<string, { module: string; rank: number; scale: number }> = {
      "blk.0.attn_v.weight": { module: moduleOf("v_proj"), rank: 4, scale: 2 / 4 },
      "blk.0.attn_output.weight": { module: moduleOf("o_proj"), rank: 2, scale: 8 / 2 },
      "blk.0.ffn_gate.weight": { module: moduleOf("gate_proj"), rank: 4, scale: 8 / 4 },
      "blk.0.ffn_up.weight": { module: moduleOf("up_proj"), rank: 4, scale: 12 / 4 },
      "output.weight": { module: "lm_head", rank: 2, scale: 4 / 2 },
    };
    expect(plan.targets).toEqual(Object.keys(expected));
    const written = await tensorsOf(out);
    for (const w of plan.weights) {
      const { module, rank, scale } = expected[w.target]!;
      expect(w.rank).toBe(rank);
      expect((plan.alpha / rank) * w.bScale, w.target).toBeCloseTo(scale, 12);
      expect(written.get(`${w.target}.lora_a`)).toEqual(tensor(tensors, peftName(module, "A")));
      expect(written.get(`${w.target}.lora_b`)).toEqual(scaled(tensor(tensors, peftName(module, "B")), w.bScale));
    }
  });

  it("widens BF16 and F16 factors to F32 exactly", async () => {
    const bf16 = loraTensors(moduleOf("gate_proj"), 4, 7, "BF16");
    const f16 = loraTensors("lm_head", 4, 8, "F16");
    const { out } = await convert(peftConfig(), [...bf16, ...f16]);
    const written = await tensorsOf(out);
    expect(written.get("blk.0.ffn_gate.weight.lora_a")).toEqual(decodeBf16(encodeBf16(bf16[0]!.data)));
    expect(written.get("blk.0.ffn_gate.weight.lora_b")).toEqual(decodeBf16(encodeBf16(bf16[1]!.data)));
    expect(written.get("output.weight.lora_a")).toEqual(decodeF16(encodeF16(f16[0]!.data)));
    expect(written.get("output.weight.lora_b")).toEqual(decodeF16(encodeF16(f16[1]!.data)));
  });

  it("puts B's rows of llama q_proj (head_count heads) and k_proj (head_count_kv heads) in llama.cpp's rotary order", async () => {
    const tensors = [...loraTensors(moduleOf("q_proj"), 4, 1), ...loraTensors(moduleOf("o_proj"), 4, 2)];
    const k = loraTensors(moduleOf("k_proj"), 4, 3).map((t) =>
      t.name.endsWith("lora_B.weight") ? { ...t, shape: [64, 4], data: t.data.subarray(0, 64 * 4) } : t,
    );
    const { plan, out } = await convert(peftConfig(), [...tensors, ...k], gqaBase);
    expect(plan.weights.map((w) => [w.target, w.ropeHeads])).toEqual([
      ["blk.0.attn_q.weight", N_HEAD],
      ["blk.0.attn_k.weight", 1],
      ["blk.0.attn_output.weight", null],
    ]);
    const written = await tensorsOf(out);
    const qB = tensor(tensors, peftName(moduleOf("q_proj"), "B"));
    expect(written.get("blk.0.attn_q.weight.lora_b")).toEqual(hfToGgufRows(qB, N_EMBD, 4, N_HEAD));
    expect(written.get("blk.0.attn_q.weight.lora_b")).not.toEqual(qB);
    expect(written.get("blk.0.attn_q.weight.lora_a")).toEqual(tensor(tensors, peftName(moduleOf("q_proj"), "A")));
    expect(written.get("blk.0.attn_k.weight.lora_b")).toEqual(
      hfToGgufRows(tensor(k, peftName(moduleOf("k_proj"), "B")), 64, 4, 1),
    );
    expect(written.get("blk.0.attn_output.weight.lora_b")).toEqual(tensor(tensors, peftName(moduleOf("o_proj"), "B")));
  });

  it("keeps Hugging Face's row order for qwen2, whose converter does not reorder", async () => {
    const tensors = [...loraTensors(moduleOf("q_proj"), 4, 1), ...loraTensors(moduleOf("k_proj"), 4, 2)];
    const { plan, out } = await convert(peftConfig(), tensors, qwenBase);
    expect(plan.architecture).toBe("qwen2");
    expect(plan.weights.map((w) => w.ropeHeads)).toEqual([null, null]);
    expect((await readGgufHeader(out)).metadata.get("general.architecture")).toEqual(gguf.str("qwen2"));
    const written = await tensorsOf(out);
    expect(written.get("blk.0.attn_q.weight.lora_b")).toEqual(tensor(tensors, peftName(moduleOf("q_proj"), "B")));
    expect(written.get("blk.0.attn_k.weight.lora_b")).toEqual(tensor(tensors, peftName(moduleOf("k_proj"), "B")));
  });
});
