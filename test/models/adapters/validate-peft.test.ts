import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateAddon, type AddonManifest } from "../../../src/models/adapters/index.js";
import {
  demoPeftDir,
  filesIn,
  loraTensors,
  moduleOf,
  peftConfig,
  peftName,
  rejection,
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
const ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"];

let dir: string;
let tiedBase: string;
let cases = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-peft-"));
  tiedBase = path.join(dir, "tied.gguf");
  await rewriteGguf(tinyBase, tiedBase, { tensors: (ts) => ts.filter((t) => t.name !== "output.weight") });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function addon(options: {
  config?: Record<string, unknown>;
  tensors: TensorSpec[];
}): Promise<Map<string, string>> {
  const d = path.join(dir, `case-${cases++}`);
  await mkdir(d);
  return writePeftFolder(d, options);
}

async function problem(
  options: { config?: Record<string, unknown>; tensors?: TensorSpec[] },
  base = tinyBase,
  maxRank = limits.maxRank,
): Promise<string> {
  const files = await addon({ config: options.config, tensors: options.tensors ?? loraTensors("lm_head", 4, 1) });
  const error = await rejection(validateAddon(files, manifest, base, { maxRank }));
  expect(error).toMatchObject({ code: "invalid_request" });
  return error.message;
}

const config = peftConfig;

describe("validateAddon (PEFT)", () => {
  it("accepts the demo adapter", async () => {
    const files = filesIn(demoPeftDir, ["adapter_config.json", "adapter_model.safetensors", "hearth.json"]);
    expect(await validateAddon(files, manifest, tinyBase, limits)).toEqual({
      format: "peft",
      rank: 16,
      targets: ["output.weight"],
      architecture: "llama",
      alpha: 16,
      weights: [
        {
          target: "output.weight",
          source: { a: peftName("lm_head", "A"), b: peftName("lm_head", "B") },
          rank: 16,
          inFeatures: 320,
          outFeatures: 257,
          bScale: 1,
          ropeHeads: null,
        },
      ],
    });
  });

  it("accepts every supported module, listing targets in the base model's order", async () => {
    const tensors = [...ALL]
      .reverse()
      .flatMap((kind, i) => loraTensors(moduleOf(kind), 4, i, (["F32", "F16", "BF16"] as const)[i % 3]));
    const plan = await validateAddon(await addon({ tensors }), manifest, tinyBase, limits);
    expect(plan.targets).toEqual([
      "blk.0.attn_q.weight",
      "blk.0.attn_k.weight",
      "blk.0.attn_v.weight",
      "blk.0.attn_output.weight",
      "blk.0.ffn_gate.weight",
      "blk.0.ffn_up.weight",
      "blk.0.ffn_down.weight",
      "output.weight",
    ]);
    expect(plan.weights.map((w) => [w.ropeHeads, w.outFeatures, w.inFeatures])).toEqual([
      [5, 320, 320],
      [5, 320, 320],
      [null, 320, 320],
      [null, 320, 320],
      [null, 32, 320],
      [null, 32, 320],
      [null, 320, 32],
      [null, 257, 320],
    ]);
    expect(plan.rank).toBe(4);
  });

  it("names the upload's file, not the server's path, in errors", async () => {
    const files = await addon({ tensors: [{ name: "nonsense", shape: [1], data: new Float32Array(1) }] });
    const stored = path.join(path.dirname(files.get("adapter_model.safetensors")!), "blob-1234");
    await rename(files.get("adapter_model.safetensors")!, stored);
    files.set("adapter_model.safetensors", stored);
    expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toMatch(
      /^adapter_model\.safetensors: tensor nonsense is not a LoRA weight/,
    );
    await writeFile(stored, "garbage!");
    expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toMatch(
      /^adapter_model\.safetensors: header length/,
    );
  });

  describe("refuses", () => {
    it("r above the rank limit", async () => {
      expect(await problem({ config: config({ r: 8 }), tensors: loraTensors("lm_head", 8, 1) }, tinyBase, 4)).toBe(
        "adapter_config.json: r: rank 8 is outside the accepted range, 1 to 4",
      );
    });

    it("r that is missing, zero or fractional", async () => {
      expect(await problem({ config: config({ r: undefined }) })).toBe(
        "adapter_config.json: r (the LoRA rank) is missing",
      );
      expect(await problem({ config: config({ r: 0 }) })).toBe("adapter_config.json: r must be a positive integer");
      expect(await problem({ config: config({ r: 2.5 }) })).toBe("adapter_config.json: r must be a positive integer");
    });

    it("a rank_pattern rank above the limit", async () => {
      expect(await problem({ config: config({ rank_pattern: { q_proj: 64 } }) })).toBe(
        'adapter_config.json: rank_pattern["q_proj"]: rank 64 is outside the accepted range, 1 to 32',
      );
    });

    it("a tensor whose rank differs from the config's", async () => {
      expect(await problem({ config: config({ r: 4 }), tensors: loraTensors("lm_head", 8, 1) })).toBe(
        `adapter_model.safetensors: tensor ${peftName("lm_head", "A")} has rank 8, but adapter_config.json gives lm_head rank 4`,
      );
      const patterned = config({ r: 8, rank_pattern: { "model.layers.0.self_attn.q_proj": 2 } });
      expect(await problem({ config: patterned, tensors: loraTensors(moduleOf("q_proj"), 8, 1) })).toBe(
        `adapter_model.safetensors: tensor ${peftName(moduleOf("q_proj"), "A")} has rank 8, but adapter_config.json gives model.layers.0.self_attn.q_proj rank 2`,
      );
    });

    it("a tensor rank above the limit, whatever the config says", async () => {
      expect(await problem({ config: config({ r: 4 }), tensors: loraTensors("lm_head", 8, 1) }, tinyBase, 4)).toBe(
        `adapter_model.safetensors: tensor ${peftName("lm_head", "A")}: rank 8 is outside the accepted range, 1 to 4`,
      );
    });

    it("target modules Hearth cannot apply, listing the supported ones", async () => {
      expect(await problem({ config: config({ target_modules: ["q_proj", "embed_tokens"] }) })).toBe(
        "adapter_config.json: target_modules includes embed_tokens, which Hearth cannot apply a LoRA to " +
          "(supported modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head)",
      );
    });

    it("modules_to_save", async () => {
      expect(await problem({ config: config({ modules_to_save: ["lm_head"] }) })).toMatch(
        /^adapter_config\.json: modules_to_save lists modules saved as full weights, not as a LoRA/,
      );
    });

    it("fan_in_fan_out", async () => {
      expect(await problem({ config: config({ fan_in_fan_out: true }) })).toMatch(
        /^adapter_config\.json: fan_in_fan_out .* is not supported$/,
      );
    });

    it("trained biases", async () => {
      expect(await problem({ config: config({ bias: "lora_only" }) })).toBe(
        'adapter_config.json: bias is "lora_only"; only "none" is supported (trained biases are not part of a LoRA)',
      );
    });

    it("DoRA", async () => {
      expect(await problem({ config: config({ use_dora: true }) })).toBe(
        "adapter_config.json: DoRA adapters (use_dora) are not supported",
      );
    });

    it("a lora_alpha that is not a positive number", async () => {
      expect(await problem({ config: config({ lora_alpha: -1 }) })).toBe(
        "adapter_config.json: lora_alpha must be a positive number",
      );
      expect(await problem({ config: config({ lora_alpha: "16" }) })).toBe(
        "adapter_config.json: lora_alpha must be a positive number",
      );
    });

    it("an alpha, a value or a scaled product past float16, which llama.cpp may compute in", async () => {
      const PAST = "past 65504, the largest float16 (llama.cpp may compute in it)";
      expect(await problem({ config: config({ lora_alpha: 1e38 }) })).toBe(
        `adapter_config.json: lora_alpha is 1e+38, ${PAST}`,
      );
      expect(await problem({ config: config({ lora_alpha: 1e-50 }) })).toBe(
        "adapter_config.json: lora_alpha is 1e-50, which a float32 (as llama.cpp reads it) holds as 0",
      );
      expect(await problem({ config: config({ alpha_pattern: { lm_head: 1e6 } }) })).toBe(
        `adapter_config.json: alpha_pattern["lm_head"] is 1000000, ${PAST}`,
      );
      const tensors = loraTensors("lm_head", 4, 1);
      tensors[0]!.data[3] = 1e5;
      expect(await problem({ tensors })).toBe(
        `adapter_model.safetensors: tensor ${peftName("lm_head", "A")} holds a value of 1.00e+5, ${PAST}`,
      );
      // B as served is B × (module alpha / lora_alpha): 8 × 10,000.
      expect(
        await problem({
          config: config({ alpha_pattern: { lm_head: 80_000 / 1e3 }, lora_alpha: 8 / 1e3 }),
          tensors: loraTensors("lm_head", 4, 1, "F32", 10),
        }),
      ).toMatch(
        /^adapter_model\.safetensors: tensor base_model\.model\.lm_head\.lora_B\.weight, scaled by 10000 \(the module's alpha over lora_alpha\), holds a value of 9\.\d\de\+4, past 65504/,
      );
      // Each factor fits, but scale (4096 / 4) × rank 4 × max|A| × max|B| (about 10 each) does not.
      expect(
        await problem({ config: config({ lora_alpha: 4096 }), tensors: loraTensors("lm_head", 4, 1, "F32", 10) }),
      ).toMatch(
        new RegExp(
          `^adapter_model\\.safetensors: tensors ${peftName("lm_head", "B").replaceAll(".", "\\.")} and .*lora_A\\.weight: ` +
            `scaled by 1024 \\(adapter_config\\.json's alpha over r\\), their product may reach 4\\.\\d\\de\\+5, ${PAST.replace(/[()]/g, "\\$&")}$`,
        ),
      );
      // The same adapter with a trained adapter's alpha is accepted: the bound is far from real weights.
      const files = await addon({
        config: config({ lora_alpha: 16 }),
        tensors: loraTensors("lm_head", 4, 1, "F32", 10),
      });
      await expect(validateAddon(files, manifest, tinyBase, limits)).resolves.toMatchObject({ alpha: 16 });
    });

    it("pattern keys that are regular expressions, and bad pattern values", async () => {
      expect(await problem({ config: config({ alpha_pattern: { "layers\\.[0-3]\\.q_proj": 4 } }) })).toMatch(
        /^adapter_config\.json: alpha_pattern key "layers\\\\\.\[0-3\]\\\\\.q_proj" is not a module name/,
      );
      expect(await problem({ config: config({ alpha_pattern: { q_proj: 0 } }) })).toBe(
        'adapter_config.json: alpha_pattern["q_proj"] must be a positive number',
      );
    });

    it("a tensor name that is not a LoRA weight", async () => {
      expect(
        await problem({
          tensors: [{ name: "model.layers.0.self_attn.q_proj.weight", shape: [1], data: new Float32Array(1) }],
        }),
      ).toMatch(
        /^adapter_model\.safetensors: tensor model\.layers\.0\.self_attn\.q_proj\.weight is not a LoRA weight Hearth understands/,
      );
    });

    it("an embedding LoRA", async () => {
      const name = "base_model.model.model.embed_tokens.lora_embedding_A";
      expect(await problem({ tensors: [{ name, shape: [4, 257], data: new Float32Array(4 * 257) }] })).toMatch(
        new RegExp(
          `^adapter_model\\.safetensors: tensor ${name.replaceAll(".", "\\.")} is an embedding LoRA, which Hearth cannot apply \\(supported modules: q_proj`,
        ),
      );
    });

    it("names with an adapter name (an unsaved state dict)", async () => {
      const tensors = loraTensors("lm_head", 4, 1).map((t) => ({
        ...t,
        name: t.name.replace(".weight", ".default.weight"),
      }));
      expect(await problem({ tensors })).toMatch(
        /^adapter_model\.safetensors: tensor base_model\.model\.lm_head\.lora_A\.default\.weight carries an adapter name .* save_pretrained/,
      );
    });

    it("a module Hearth cannot adapt", async () => {
      const tensors = loraTensors("lm_head", 4, 1).map((t) => ({
        ...t,
        name: t.name.replace("lm_head", "model.embed_tokens"),
      }));
      expect(await problem({ tensors })).toBe(
        `adapter_model.safetensors: tensor base_model.model.model.embed_tokens.lora_A.weight adapts model.embed_tokens, which Hearth cannot apply a LoRA to ` +
          "(supported modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head)",
      );
      const misplaced = loraTensors("lm_head", 4, 1).map((t) => ({
        ...t,
        name: t.name.replace("lm_head", "model.layers.0.mlp.q_proj"),
      }));
      expect(await problem({ tensors: misplaced })).toMatch(
        /tensor base_model\.model\.model\.layers\.0\.mlp\.q_proj\.lora_A\.weight adapts model\.layers\.0\.mlp\.q_proj, which Hearth cannot/,
      );
    });

    it("a layer the base model does not have", async () => {
      expect(await problem({ tensors: loraTensors(moduleOf("v_proj", 3), 4, 1) })).toBe(
        `adapter_model.safetensors: tensor ${peftName(moduleOf("v_proj", 3), "A")} is for layer 3, but the base model has 1 layer (0 to 0)`,
      );
    });

    it("lora_A without lora_B, and lora_B without lora_A", async () => {
      const [a, b] = loraTensors(moduleOf("o_proj"), 4, 1);
      expect(await problem({ tensors: [a!] })).toBe(
        `adapter_model.safetensors: tensor ${a!.name} has no matching lora_B tensor`,
      );
      expect(await problem({ tensors: [b!] })).toBe(
        `adapter_model.safetensors: tensor ${b!.name} has no matching lora_A tensor`,
      );
    });

    it("factor shapes that do not fit the base weight", async () => {
      const [a, b] = loraTensors(moduleOf("down_proj"), 4, 1);
      const wrongIn = { ...a!, shape: [4, 320], data: new Float32Array(4 * 320) };
      expect(await problem({ tensors: [wrongIn, b!] })).toBe(
        `adapter_model.safetensors: tensor ${a!.name} has shape [4, 320], expected [rank, 32] for blk.0.ffn_down.weight of shape [320, 32]`,
      );
      const wrongOut = { ...b!, shape: [32, 4], data: new Float32Array(32 * 4) };
      expect(await problem({ tensors: [a!, wrongOut] })).toBe(
        `adapter_model.safetensors: tensor ${b!.name} has shape [32, 4], expected [320, 4] for blk.0.ffn_down.weight of shape [320, 32] and rank 4`,
      );
      const otherRank = { ...b!, shape: [320, 2], data: new Float32Array(320 * 2) };
      expect(await problem({ tensors: [a!, otherRank] })).toMatch(
        /tensor .*lora_B\.weight has shape \[320, 2\], expected \[320, 4\]/,
      );
      const vector = { ...a!, shape: [4 * 32], data: new Float32Array(4 * 32) };
      expect(await problem({ tensors: [vector, b!] })).toMatch(
        /tensor .*lora_A\.weight has shape \[128\], expected \[rank, 32\]/,
      );
    });

    it("lm_head on a base model whose output is tied to its embeddings", async () => {
      expect(await problem({ tensors: loraTensors("lm_head", 4, 1) }, tiedBase)).toBe(
        `adapter_model.safetensors: tensor ${peftName("lm_head", "A")} adapts lm_head, but the base model ties its output layer to its token embeddings ` +
          "(it has no output.weight); a LoRA on lm_head cannot be applied to it",
      );
    });

    it("tensors for modules target_modules does not select", async () => {
      expect(
        await problem({
          config: config({ target_modules: ["q_proj", "v_proj"] }),
          tensors: loraTensors(moduleOf("k_proj"), 4, 1),
        }),
      ).toBe(
        `adapter_model.safetensors: tensor ${peftName(moduleOf("k_proj"), "A")} adapts model.layers.0.self_attn.k_proj, which target_modules in adapter_config.json does not select`,
      );
      expect(
        await problem({ config: config({ target_modules: "all-linear" }), tensors: loraTensors("lm_head", 4, 1) }),
      ).toMatch(/adapts lm_head, which target_modules in adapter_config\.json does not select/);
    });

    it("dtypes other than F32, F16 and BF16", async () => {
      const files = await addon({ tensors: loraTensors("lm_head", 4, 1) });
      const header = Buffer.from(
        JSON.stringify({ [peftName("lm_head", "A")]: { dtype: "I32", shape: [1], data_offsets: [0, 4] } }),
      );
      const prefix = Buffer.alloc(8);
      prefix.writeBigUInt64LE(BigInt(header.length));
      await writeFile(files.get("adapter_model.safetensors")!, Buffer.concat([prefix, header, Buffer.alloc(4)]));
      expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toMatch(
        /^adapter_model\.safetensors: tensor base_model\.model\.lm_head\.lora_A\.weight has unsupported dtype I32 \(supported: F32, F16, BF16\)/,
      );
    });

    it("headers past the adapter bounds: over 16 MiB, or over 16,384 tensors", async () => {
      const files = await addon({ tensors: loraTensors("lm_head", 4, 1) });
      const file = files.get("adapter_model.safetensors")!;
      const prefix = Buffer.alloc(8);
      prefix.writeBigUInt64LE(BigInt(17 * 1024 * 1024));
      await writeFile(file, Buffer.concat([prefix, Buffer.from("{}")]));
      expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toBe(
        "adapter_model.safetensors: header length 17825792 exceeds 16777216 bytes",
      );
      const many = Object.fromEntries(
        Array.from({ length: 16_385 }, (_, i) => [
          `t${i}`,
          { dtype: "F32", shape: [1], data_offsets: [4 * i, 4 * i + 4] },
        ]),
      );
      const header = Buffer.from(JSON.stringify(many));
      prefix.writeBigUInt64LE(BigInt(header.length));
      await writeFile(file, Buffer.concat([prefix, header, Buffer.alloc(4 * 16_385)]));
      expect((await rejection(validateAddon(files, manifest, tinyBase, limits))).message).toBe(
        "adapter_model.safetensors: holds more than 16384 tensors",
      );
    });

    it("NaN and infinite values", async () => {
      for (const [value, dtype] of [
        [NaN, "F32"],
        [Infinity, "F16"],
        [-Infinity, "BF16"],
        [1e6, "F16"],
      ] as const) {
        const tensors = loraTensors("lm_head", 4, 1, dtype);
        tensors[1]!.data[7] = value;
        expect(await problem({ tensors }), String(value)).toMatch(
          /^adapter_model\.safetensors: tensor base_model\.model\.lm_head\.lora_B\.weight holds a non-finite value \((NaN|-?Infinity)\) at index 7$/,
        );
      }
    });

    it("an adapter with no tensors", async () => {
      expect(await problem({ tensors: [] })).toBe("adapter_model.safetensors: holds no tensors");
    });
  });

  it("does not evaluate a regular-expression target_modules: the tensors decide", async () => {
    const files = await addon({
      config: config({ target_modules: ".*\\.(q_proj|v_proj)" }),
      tensors: loraTensors(moduleOf("q_proj"), 4, 1),
    });
    expect((await validateAddon(files, manifest, tinyBase, limits)).targets).toEqual(["blk.0.attn_q.weight"]);
  });
});
