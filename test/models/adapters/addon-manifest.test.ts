import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors.js";
import { ADDON_FILE_NAMES, checkAddonFileName, readAddonManifest } from "../../../src/models/adapters/index.js";
import { demoGgufDir, demoPeftDir, filesIn, peftConfig, rejection } from "../../helpers/addon-fixtures.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-manifest-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function nameProblem(name: string): AppError {
  try {
    checkAddonFileName(name);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "invalid_request", param: "file_name" });
    return error as AppError;
  }
  throw new Error(`${JSON.stringify(name)} was accepted`);
}

/** A folder holding the given files (name → content) and its file map. */
async function folder(name: string, contents: Record<string, string>): Promise<Map<string, string>> {
  const d = path.join(dir, name);
  await rm(d, { recursive: true, force: true });
  await mkdir(d);
  for (const [file, content] of Object.entries(contents)) await writeFile(path.join(d, file), content);
  return filesIn(d, Object.keys(contents));
}

const config = JSON.stringify(peftConfig());

describe("checkAddonFileName", () => {
  it("accepts the addon's files", () => {
    for (const name of ADDON_FILE_NAMES) expect(() => checkAddonFileName(name)).not.toThrow();
  });

  it("refuses path components and hidden names", () => {
    for (const name of [
      "../adapter.gguf",
      "a/adapter.gguf",
      "a\\adapter.gguf",
      "..",
      ".",
      ".hearth.json",
      "/etc/passwd",
      "x\u0000y",
    ]) {
      expect(nameProblem(name).message).toMatch(/plain name: no folders/);
    }
  });

  it("refuses empty and over-long names", () => {
    expect(nameProblem("").message).toBe("file_name is empty");
    expect(nameProblem("a".repeat(256)).message).toMatch(/longer than 255 bytes/);
  });

  it("refuses pickle weights with the way to save safetensors", () => {
    const { message } = nameProblem("adapter_model.bin");
    expect(message).toMatch(/^adapter_model\.bin: PyTorch pickle files are not accepted/);
    expect(message).toContain("save_pretrained(..., safe_serialization=True)");
    expect(nameProblem("pytorch_model.pt").message).toContain("safe_serialization=True");
  });

  it("refuses other names, listing the accepted ones", () => {
    expect(nameProblem("README.md").message).toBe(
      "README.md: not an addon file (accepted: adapter_config.json, adapter_model.safetensors, adapter.gguf, hearth.json)",
    );
  });
});

describe("readAddonManifest", () => {
  it("reads the demo PEFT addon", async () => {
    const files = filesIn(demoPeftDir, ["adapter_config.json", "adapter_model.safetensors", "hearth.json"]);
    expect(await readAddonManifest(files)).toEqual({
      format: "peft",
      baseModel: "accounts/hearth/models/hearth-tiny",
      baseModelFrom: "hearth.json",
      conversationConfig: undefined,
    });
  });

  it("reads the demo GGUF addon", async () => {
    expect(await readAddonManifest(filesIn(demoGgufDir, ["adapter.gguf", "hearth.json"]))).toEqual({
      format: "gguf",
      baseModel: "accounts/hearth/models/hearth-tiny",
      baseModelFrom: "hearth.json",
      conversationConfig: undefined,
    });
  });

  it("takes base_model from hearth.json over base_model_name_or_path, and the conversation config", async () => {
    const conversation = { template: "{{ messages }}" };
    const files = await folder("override", {
      "adapter_config.json": config,
      "adapter_model.safetensors": "",
      "hearth.json": JSON.stringify({ base_model: "accounts/a/models/b", conversation_config: conversation }),
    });
    expect(await readAddonManifest(files)).toEqual({
      format: "peft",
      baseModel: "accounts/a/models/b",
      baseModelFrom: "hearth.json",
      conversationConfig: conversation,
    });
    const plain = await folder("plain", { "adapter_config.json": config, "adapter_model.safetensors": "" });
    expect(await readAddonManifest(plain)).toMatchObject({
      baseModel: "accounts/hearth/models/hearth-tiny",
      baseModelFrom: "adapter_config.json",
    });
    const bare = await folder("bare", { "adapter.gguf": "" });
    expect(await readAddonManifest(bare)).toEqual({
      format: "gguf",
      baseModel: undefined,
      baseModelFrom: undefined,
      conversationConfig: undefined,
    });
  });

  it("refuses an unknown file name", async () => {
    const files = await folder("unknown", { "adapter.gguf": "", "notes.txt": "" });
    expect((await rejection(readAddonManifest(files))).message).toMatch(/^notes\.txt: not an addon file/);
  });

  it("refuses both formats at once", async () => {
    const files = await folder("both", {
      "adapter.gguf": "",
      "adapter_config.json": config,
      "adapter_model.safetensors": "",
    });
    expect((await rejection(readAddonManifest(files))).message).toMatch(
      /^adapter\.gguf: an addon is either adapter\.gguf or adapter_config\.json with adapter_model\.safetensors, not both/,
    );
  });

  it("refuses an addon with no adapter", async () => {
    const files = await folder("neither", { "hearth.json": "{}" });
    expect((await rejection(readAddonManifest(files))).message).toMatch(
      /^adapter_model\.safetensors: missing: an addon is/,
    );
  });

  it("refuses a config without weights, and weights without a config", async () => {
    const noWeights = await folder("no-weights", { "adapter_config.json": config });
    expect((await rejection(readAddonManifest(noWeights))).message).toMatch(
      /^adapter_model\.safetensors: missing: adapter_config\.json needs/,
    );
    const noConfig = await folder("no-config", { "adapter_model.safetensors": "" });
    expect((await rejection(readAddonManifest(noConfig))).message).toMatch(/^adapter_config\.json: missing/);
  });

  it("refuses hearth.json that is not JSON, not an object, too large, or has bad fields", async () => {
    const cases: [string | Buffer, string][] = [
      ["{nope", "hearth.json: is not valid UTF-8 JSON"],
      [Buffer.from([0x7b, 0xff, 0x7d]), "hearth.json: is not valid UTF-8 JSON"],
      ["[1]", "hearth.json: must hold a JSON object"],
      [`{"base_model": "${"x".repeat(1024 * 1024)}"}`, "hearth.json: is 1048594 bytes; the limit is 1048576 bytes"],
      [`{"base_model": 3}`, "hearth.json: base_model must be a model name of 1 to 512 characters"],
      [`{"base_model": ""}`, "hearth.json: base_model must be a model name of 1 to 512 characters"],
      [`{"conversation_config": "chatml"}`, "hearth.json: conversation_config must be an object"],
      [`{"basemodel": "x"}`, `hearth.json: unknown key "basemodel" (accepted: base_model, conversation_config)`],
    ];
    for (const [i, [content, message]] of cases.entries()) {
      const files = await folder(`hearth-${i}`, { "adapter.gguf": "" });
      await writeFile(path.join(dir, `hearth-${i}`, "hearth.json"), content);
      files.set("hearth.json", path.join(dir, `hearth-${i}`, "hearth.json"));
      expect((await rejection(readAddonManifest(files))).message).toBe(message);
    }
  });

  it("refuses an adapter_config.json that is not a LoRA config", async () => {
    const files = await folder("bad-config", {
      "adapter_config.json": JSON.stringify(peftConfig({ peft_type: "IA3" })),
      "adapter_model.safetensors": "",
    });
    expect((await rejection(readAddonManifest(files))).message).toBe(
      'adapter_config.json: peft_type is "IA3"; only LORA adapters are supported',
    );
  });
});
