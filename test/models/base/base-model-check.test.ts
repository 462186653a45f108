import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors.js";
import { checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import { buildBigramTable } from "../../../src/models/factory/bigram.js";
import { writeGgufLora } from "../../../src/models/formats/gguf-lora.js";
import { gguf, type GgufValue } from "../../../src/models/formats/gguf-types.js";
import { writeGguf } from "../../../src/models/formats/gguf-writer.js";
import { hearthTinyShape, tinyLlamaMetadata, writeTinyLlama } from "../../../src/models/factory/tiny-llama.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-check-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A header-only variant of hearth-tiny: its metadata (edited) and a token embedding. */
async function variant(
  name: string,
  edit: (meta: Record<string, GgufValue>) => void,
  embd: [number, number] = [257, hearthTinyShape.embeddingLength],
): Promise<string> {
  const meta = tinyLlamaMetadata("variant", hearthTinyShape);
  edit(meta);
  const file = path.join(dir, `${name}.gguf`);
  await writeGguf(file, {
    metadata: meta,
    tensors: [{ name: "token_embd.weight", type: "F32", shape: embd, data: () => new Float32Array(embd[0] * embd[1]) }],
  });
  return file;
}

async function problem(file: string): Promise<string> {
  const error = await checkLlamaBaseModel(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("invalid_request");
  return (error as AppError).message;
}

describe("checkLlamaBaseModel", () => {
  it("accepts hearth-tiny and summarizes it", async () => {
    const file = path.join(dir, "tiny.gguf");
    await writeTinyLlama(file, { table: buildBigramTable("hello hearth"), name: "tiny" });
    const summary = await checkLlamaBaseModel(file);
    expect(summary).toMatchObject({
      architecture: "llama",
      name: "tiny",
      contextLength: 2048,
      embeddingLength: 320,
      blockCount: 1,
      headCount: 5,
      headCountKv: 5,
      feedForwardLength: 32,
      vocabSize: 257,
      tokenizerModel: "gpt2",
      hasChatTemplate: false,
      poolingType: 1,
    });
    expect(summary.chatTemplate).toBeUndefined();
    expect(summary.tensors).toContainEqual({ name: "output.weight", shape: [257, 320], type: "F32" });
    expect(summary.tensors).toContainEqual({ name: "blk.0.ffn_down.weight", shape: [320, 32], type: "F32" });
    expect(summary.tensors).toHaveLength(12);
  });

  it("reports a chat template when there is one", async () => {
    const file = await variant("templated", (m) => {
      m["tokenizer.chat_template"] = gguf.str("{{ messages }}");
    });
    expect(await checkLlamaBaseModel(file)).toMatchObject({ hasChatTemplate: true, chatTemplate: "{{ messages }}" });
  });

  it("accepts qwen2 and qwen3 keys", async () => {
    for (const arch of ["qwen2", "qwen3"]) {
      const file = await variant(arch, (m) => {
        for (const key of Object.keys(m)) {
          if (key.startsWith("llama.")) {
            m[`${arch}.${key.slice(6)}`] = m[key]!;
            delete m[key];
          }
        }
        m["general.architecture"] = gguf.str(arch);
      });
      expect((await checkLlamaBaseModel(file)).architecture).toBe(arch);
    }
  });

  const required = [
    "general.architecture",
    "llama.context_length",
    "llama.embedding_length",
    "llama.block_count",
    "llama.feed_forward_length",
    "llama.attention.head_count",
    "llama.attention.layer_norm_rms_epsilon",
    "tokenizer.ggml.model",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.merges",
  ];
  for (const key of required) {
    it(`rejects a file without ${key}`, async () => {
      const file = await variant(`no-${key}`, (m) => {
        delete m[key];
      });
      expect(await problem(file)).toBe(`no-${key}.gguf: missing ${key}`);
    });
  }

  it("rejects bad values llama.cpp would crash on", async () => {
    const cases: [string, (m: Record<string, GgufValue>) => void, RegExp][] = [
      ["zero-heads", (m) => void (m["llama.attention.head_count"] = gguf.u32(0)), /head_count must be positive/],
      [
        "zero-kv-heads",
        (m) => void (m["llama.attention.head_count_kv"] = gguf.u32(0)),
        /head_count_kv must be positive/,
      ],
      [
        "gqa",
        (m) => void (m["llama.attention.head_count_kv"] = gguf.u32(3)),
        /not a multiple of the key-value head count/,
      ],
      [
        "heads",
        (m) => {
          m["llama.attention.head_count"] = gguf.u32(7);
          m["llama.attention.head_count_kv"] = gguf.u32(7);
        },
        /embedding_length 320 is not a multiple of the head count 7/,
      ],
      ["layers", (m) => void (m["llama.block_count"] = gguf.u32(513)), /block_count 513 exceeds 512/],
      ["eps", (m) => void (m["llama.attention.layer_norm_rms_epsilon"] = gguf.f32(0)), /positive number/],
      [
        "string-ctx",
        (m) => void (m["llama.context_length"] = gguf.str("2048")),
        /context_length must be a number, not string/,
      ],
      ["arch", (m) => void (m["general.architecture"] = gguf.str("mamba")), /unsupported architecture mamba/],
      [
        "tokenizer",
        (m) => void (m["tokenizer.ggml.model"] = gguf.str("bert")),
        /unsupported tokenizer.ggml.model bert/,
      ],
      [
        "types",
        (m) => void (m["tokenizer.ggml.token_type"] = gguf.i32s([1, 2])),
        /token_type has 2 entries for 257 tokens/,
      ],
      ["eos", (m) => void (m["tokenizer.ggml.eos_token_id"] = gguf.u32(999)), /eos_token_id is outside the vocabulary/],
      ["rope", (m) => void (m["llama.rope.scaling.type"] = gguf.str("wild")), /unknown llama.rope.scaling.type wild/],
      ["ff-array", (m) => void (m["llama.feed_forward_length"] = gguf.i32s([32, 32])), /2 entries for 1 layers/],
    ];
    for (const [name, edit, pattern] of cases) {
      expect(await problem(await variant(name, edit))).toMatch(pattern);
    }
  });

  it("rejects a token embedding that does not match the vocabulary", async () => {
    const file = await variant("embd", () => {}, [256, 320]);
    expect(await problem(file)).toMatch(/token_embd.weight has shape \[256, 320\], expected \[257, 320\]/);
  });

  it("rejects a LoRA adapter passed as a base model", async () => {
    const file = path.join(dir, "adapter.gguf");
    const pair = { rank: 1, inFeatures: 4, outFeatures: 3, a: new Float32Array(4), b: new Float32Array(3) };
    await writeGgufLora(file, {
      architecture: "llama",
      name: "x",
      alpha: 1,
      weights: [{ tensor: "output.weight", pair }],
    });
    expect(await problem(file)).toBe("adapter.gguf: is a LoRA adapter (general.type = adapter), not a base model");
  });

  it("rejects files that are not GGUF at all", async () => {
    const file = path.join(dir, "readme.gguf");
    await (await import("node:fs/promises")).writeFile(file, "# not a model\n".repeat(10));
    expect(await problem(file)).toBe("readme.gguf: not a GGUF file (bad magic)");
  });
});
