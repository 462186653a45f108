import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAddonFolder } from "../../src/cli/addon-folder.js";
import { CliError } from "../../src/cli/exit-codes.js";
import { testModelDir } from "../helpers/test-models.js";

/** The local checks of `hearth create model` (the CLI tests cover the PEFT refusals through the binary). */

const GGUF_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-addon-folder-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("checkAddonFolder", () => {
  it("accepts both example adapters and says what it would upload", async () => {
    expect(await checkAddonFolder(path.join(testModelDir, "examples", "hearth-tiny-lora"))).toMatchObject({
      format: "peft",
      baseModel: "accounts/hearth/models/hearth-tiny",
      ignored: [],
      files: [{ name: "adapter_config.json" }, { name: "adapter_model.safetensors" }, { name: "hearth.json" }],
    });
    const gguf = await checkAddonFolder(GGUF_EXAMPLE);
    expect(gguf.format).toBe("gguf");
    expect(gguf.files.map((f) => f.name)).toEqual(["adapter.gguf", "hearth.json"]);
  });

  it("refuses a GGUF that is a model, not an adapter (exit code 2)", async () => {
    const folder = path.join(dir, "base-as-adapter");
    await cp(GGUF_EXAMPLE, folder, { recursive: true });
    await cp(path.join(testModelDir, "hearth-tiny.gguf"), path.join(folder, "adapter.gguf"));
    const error = await checkAddonFolder(folder).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toContain('adapter.gguf: general.type is "model", not "adapter"');
  });
});
