import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import {
  DEMO_LORA_RANK,
  HEARTH_TINY_REF,
  buildDemoModels,
  demoTables,
  type DemoModels,
} from "../../../src/models/factory/demo-models.js";
import { readGgufHeader } from "../../../src/models/formats/gguf-reader.js";
import { readSafetensors } from "../../../src/models/formats/safetensors-reader.js";

let root: string;
let models: DemoModels;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-demo-"));
  models = await buildDemoModels(path.join(root, "a"));
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
  for (const file of await listFiles(dir)) {
    out[file] = createHash("sha256")
      .update(await readFile(path.join(dir, file)))
      .digest("hex");
  }
  return out;
}

describe("demo models", () => {
  it("writes the documented layout and nothing else", async () => {
    expect(await listFiles(models.dir)).toEqual([
      "examples/hearth-tiny-lora-gguf/adapter.gguf",
      "examples/hearth-tiny-lora-gguf/hearth.json",
      "examples/hearth-tiny-lora/adapter_config.json",
      "examples/hearth-tiny-lora/adapter_model.safetensors",
      "examples/hearth-tiny-lora/hearth.json",
      "hearth-tiny.gguf",
    ]);
    expect(models.written).toHaveLength(3);
    expect(models.baseModel).toBe(path.join(models.dir, "hearth-tiny.gguf"));
    expect(models.ggufAdapter).toBe(path.join(models.ggufAdapterDir, "adapter.gguf"));
  });

  it("builds a base model that passes the base-model check", async () => {
    const summary = await checkLlamaBaseModel(models.baseModel);
    expect(summary).toMatchObject({
      architecture: "llama",
      name: "hearth-tiny",
      vocabSize: 257,
      embeddingLength: 320,
      blockCount: 1,
    });
  });

  it("writes the PEFT adapter", async () => {
    const config = JSON.parse(await readFile(path.join(models.peftAdapterDir, "adapter_config.json"), "utf8"));
    expect(config).toMatchObject({
      base_model_name_or_path: HEARTH_TINY_REF,
      r: DEMO_LORA_RANK,
      lora_alpha: DEMO_LORA_RANK,
      target_modules: ["lm_head"],
      peft_type: "LORA",
      task_type: "CAUSAL_LM",
    });
    const { header, tensors } = await readSafetensors(path.join(models.peftAdapterDir, "adapter_model.safetensors"));
    expect(header.tensors.map((t) => [t.name, t.dtype, t.shape])).toEqual([
      ["base_model.model.lm_head.lora_A.weight", "F32", [DEMO_LORA_RANK, 320]],
      ["base_model.model.lm_head.lora_B.weight", "F32", [257, DEMO_LORA_RANK]],
    ]);
    const { lora } = demoTables();
    expect(tensors.get("base_model.model.lm_head.lora_A.weight")).toEqual(lora.pair.a);
    expect(tensors.get("base_model.model.lm_head.lora_B.weight")).toEqual(lora.pair.b);
    for (const dir of [models.peftAdapterDir, models.ggufAdapterDir]) {
      expect(JSON.parse(await readFile(path.join(dir, "hearth.json"), "utf8"))).toEqual({
        base_model: HEARTH_TINY_REF,
      });
    }
  });

  it("writes the GGUF adapter", async () => {
    const header = await readGgufHeader(models.ggufAdapter);
    expect(header.metadata.get("general.type")).toEqual({ type: "string", value: "adapter" });
    expect(header.metadata.get("general.architecture")).toEqual({ type: "string", value: "llama" });
    expect(header.metadata.get("adapter.type")).toEqual({ type: "string", value: "lora" });
    expect(header.metadata.get("adapter.lora.alpha")).toEqual({ type: "float32", value: DEMO_LORA_RANK });
    expect(header.tensors.map((t) => [t.name, t.type, t.shape, t.dims])).toEqual([
      ["output.weight.lora_a", "F32", [DEMO_LORA_RANK, 320], [320, DEMO_LORA_RANK]],
      ["output.weight.lora_b", "F32", [257, DEMO_LORA_RANK], [DEMO_LORA_RANK, 257]],
    ]);
  });

  it("skips what exists, repairs what is missing, rebuilds on force", async () => {
    const before = (await stat(models.baseModel)).mtimeMs;
    const again = await buildDemoModels(models.dir);
    expect(again.written).toEqual([]);
    expect((await stat(models.baseModel)).mtimeMs).toBe(before);

    await rm(path.join(models.peftAdapterDir, "hearth.json"));
    expect((await buildDemoModels(models.dir)).written).toEqual([models.peftAdapterDir]);
    expect(await readFile(path.join(models.peftAdapterDir, "hearth.json"), "utf8")).toContain(HEARTH_TINY_REF);

    const forced = await buildDemoModels(models.dir, { force: true });
    expect(forced.written).toHaveLength(3);
    expect((await listFiles(models.dir)).every((f) => !f.includes(".tmp-"))).toBe(true);
  });

  it("is deterministic: two builds give the same bytes", async () => {
    const other = await buildDemoModels(path.join(root, "b"));
    expect(await digests(other.dir)).toEqual(await digests(models.dir));
  });

  it("survives concurrent builders", async () => {
    const dir = path.join(root, "c");
    await Promise.all(Array.from({ length: 5 }, () => buildDemoModels(dir)));
    expect(await digests(dir)).toEqual(await digests(models.dir));
  });
});
