import { fileStorageDir } from "../../helpers/storage-dir.js";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../../src/models/factory/demo-models.js";
import { writeGgufLora } from "../../../src/models/formats/gguf-lora.js";
import { writeSafetensors, type SafetensorsTensorInput } from "../../../src/models/formats/safetensors-writer.js";
import { writeAdapterToward } from "../../helpers/adapters.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { defaultAccount, type Management } from "../../helpers/management.js";
import http from "node:http";

const MAX_RANK = 10;
const MAX_UPLOAD = 200_000;
const N_EMBD = 320;
const VOCAB = 257;

const f32 = (n: number, value = 0.01) => new Float32Array(n).fill(value);
const pair = (module: string, rank: number, inF: number, outF: number): SafetensorsTensorInput[] => [
  { name: `base_model.model.${module}.lora_A.weight`, dtype: "F32", shape: [rank, inF], data: f32(rank * inF) },
  { name: `base_model.model.${module}.lora_B.weight`, dtype: "F32", shape: [outF, rank], data: f32(outF * rank) },
];
const peftConfig = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    base_model_name_or_path: HEARTH_TINY_REF,
    r: 4,
    lora_alpha: 4,
    target_modules: ["lm_head"],
    ...extra,
  });

// Every way an upload can be wrong gets a clear 400, the model ends FAILED with that
// reason (or the file is refused outright), and nothing reaches storage's artifacts.
describe("addon validation over HTTP", () => {
  let hearth: TestHearth;
  let me: Management;
  let scratch: string;
  let count = 0;
  /** A valid adapter within this Hearth's rank limit. */
  let valid: string;

  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_MAX_LORA_RANK: String(MAX_RANK), HEARTH_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) },
    });
    me = defaultAccount(hearth);
    scratch = await mkdtemp(path.join(os.tmpdir(), "hearth-validation-"));
    valid = (await writeAdapterToward(path.join(scratch, "valid"), "valid value valley ", { rank: 4 })).dir;
  });
  afterAll(async () => {
    await hearth?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const storedFiles = async (modelId: string) =>
    readdir(path.join(fileStorageDir(hearth.config), "models", "default", modelId, "files")).catch(
      () => [] as string[],
    );
  const noArtifacts = () => expect(existsSync(path.join(fileStorageDir(hearth.config), "artifacts"))).toBe(false);

  /** Creates a model, uploads `files`, validates; expects a 400 matching `message` and a FAILED model. */
  async function expectFailure(files: Record<string, Uint8Array | string>, message: RegExp) {
    const modelId = `bad-${++count}`;
    expect((await me.createModel(modelId)).status).toBe(201);
    for (const [name, content] of Object.entries(files)) {
      const reply = await me.upload(modelId, name, content);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    }
    const reply = await me.validate(modelId);
    expect(reply.status).toBe(400);
    expect(reply.body.error.type).toBe("invalid_request_error");
    expect(reply.body.error.message).toMatch(message);
    const model = await me.getModel(modelId);
    expect(model.body).toMatchObject({ state: "FAILED", stateReason: reply.body.error.message, deployment: null });
    expect((await me.deploy(modelId)).status).toBe(400);
    noArtifacts();
    return reply.body.error.message as string;
  }

  async function safetensors(tensors: SafetensorsTensorInput[]): Promise<Buffer> {
    const file = path.join(scratch, `t-${++count}.safetensors`);
    await writeSafetensors(file, tensors, { format: "pt" });
    return readFile(file);
  }

  const hearthJson = JSON.stringify({ base_model: HEARTH_TINY_REF });

  describe("refused uploads store nothing", () => {
    it.each([
      ["adapter_model.bin", /adapter_model\.bin.*pickle.*safe_serialization=True/s],
      ["README.md", /not an addon file.*adapter_config\.json/],
      [".hidden", /plain name/],
      ["..%2Fhearth.json", /plain name/],
      ["sub%2Fhearth.json", /plain name/],
    ])("%s", async (name, message) => {
      await me.createModel(`upload-${++count}`);
      const modelId = `upload-${count}`;
      const reply = await me.upload(modelId, name, "x");
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ param: "file_name", type: "invalid_request_error" });
      expect(reply.body.error.message).toMatch(message);
      expect(await storedFiles(modelId)).toEqual([]);
      expect((await me.getModel(modelId)).body.state).toBe("UPLOADING");
    });

    it("a file whose SHA-256 differs from x-content-sha256", async () => {
      await me.createModel("sha-check");
      const reply = await me.upload("sha-check", "hearth.json", hearthJson, { "x-content-sha256": "0".repeat(64) });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ param: "x-content-sha256" });
      expect(reply.body.error.message).toMatch(/^hearth\.json: .*SHA-256/);
      expect(await storedFiles("sha-check")).toEqual([]);
      const sha256 = createHash("sha256").update(hearthJson).digest("hex");
      const good = await me.upload("sha-check", "hearth.json", hearthJson, { "x-content-sha256": sha256 });
      expect(good.status).toBe(200);
      expect(good.body).toMatchObject({ name: "hearth.json", size: hearthJson.length, sha256 });
    });

    it("a file over the size limit, announced or not", async () => {
      await me.createModel("too-big");
      const big = new Uint8Array(MAX_UPLOAD + 1);
      const reply = await me.upload("too-big", "adapter_model.safetensors", big);
      expect(reply.status).toBe(413);
      expect(reply.body.error.message).toMatch(/^adapter_model\.safetensors is .*bytes/);
      expect(await storedFiles("too-big")).toEqual([]);
      // Streamed without a length: stopped at the limit all the same (the server answers
      // before the client has finished sending).
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          `${hearth.url}/v1/accounts/default/models/too-big/files/adapter_model.safetensors`,
          {
            method: "PUT",
            headers: { authorization: `Bearer ${hearth.apiKey}`, "transfer-encoding": "chunked" },
          },
        );
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode!);
        });
        request.on("error", reject);
        let sent = 0;
        const more = () => {
          while (sent < 8) {
            sent++;
            if (!request.write(new Uint8Array(MAX_UPLOAD / 4))) return void request.once("drain", more);
          }
          request.end();
        };
        more();
      });
      expect(status).toBe(413);
      expect(await storedFiles("too-big")).toEqual([]);
    });

    it("an upload cut off midway leaves nothing behind", async () => {
      await me.createModel("cut-off");
      const request = http.request(`${hearth.url}/v1/accounts/default/models/cut-off/files/adapter_model.safetensors`, {
        method: "PUT",
        headers: { authorization: `Bearer ${hearth.apiKey}`, "content-length": "100000" },
      });
      request.on("error", () => {});
      request.write(new Uint8Array(40_000));
      await new Promise((r) => setTimeout(r, 200));
      request.destroy();
      const dir = path.join(fileStorageDir(hearth.config), "models", "default", "cut-off", "files");
      for (let i = 0; i < 50 && (await readdir(dir).catch(() => [])).length > 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await readdir(dir).catch(() => [])).toEqual([]);
      // The model is still usable.
      expect((await me.upload("cut-off", "hearth.json", hearthJson)).status).toBe(200);
    });

    it("files of a READY model cannot change", async () => {
      await me.createModel("settled");
      await me.uploadFolder("settled", valid);
      expect((await me.validate("settled")).body.state).toBe("READY");
      const reply = await me.upload("settled", "hearth.json", hearthJson);
      expect(reply.status).toBe(409);
    });
  });

  describe("validation failures leave the model FAILED with the reason", () => {
    it("no files at all", async () => {
      await expectFailure({}, /No files were uploaded/);
    });

    it("adapter_config.json that is not JSON", async () => {
      await expectFailure(
        { "adapter_config.json": "{ nope", "adapter_model.safetensors": "x" },
        /adapter_config\.json/,
      );
    });

    it("weights without their config", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      await expectFailure(
        { "adapter_model.safetensors": weights, "hearth.json": hearthJson },
        /adapter_config\.json.*missing/,
      );
    });

    it("a safetensors file with a broken header", async () => {
      const broken = Buffer.alloc(64);
      broken.writeBigUInt64LE(1_000_000n, 0);
      await expectFailure(
        { "adapter_config.json": peftConfig(), "adapter_model.safetensors": broken },
        /adapter_model\.safetensors/,
      );
    });

    it("a base model that does not exist", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      await expectFailure(
        {
          "adapter_config.json": peftConfig(),
          "adapter_model.safetensors": weights,
          "hearth.json": JSON.stringify({ base_model: "accounts/hearth/models/no-such-base" }),
        },
        /^hearth\.json: .*no-such-base.*does not exist/,
      );
    });

    it("a Hugging Face base model name and no hearth.json", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      const message = await expectFailure(
        {
          "adapter_config.json": peftConfig({ base_model_name_or_path: "meta-llama/Llama-3.2-1B" }),
          "adapter_model.safetensors": weights,
        },
        /^adapter_config\.json: base_model_name_or_path is "meta-llama\/Llama-3\.2-1B", which is not a Hearth model name/,
      );
      expect(message).toMatch(/hearth\.json/);
    });

    it("files naming another base model than the one given at creation", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      const modelId = "conflicted";
      await me.createModel(modelId, { baseModel: HEARTH_TINY_REF });
      await me.upload(
        modelId,
        "adapter_config.json",
        peftConfig({ base_model_name_or_path: "accounts/hearth/models/other" }),
      );
      await me.upload(modelId, "adapter_model.safetensors", weights);
      const reply = await me.validate(modelId);
      expect(reply.status).toBe(400);
      expect(reply.body.error.message).toMatch(
        /^adapter_config\.json: base_model_name_or_path "accounts\/hearth\/models\/other" differs/,
      );
      // A Hugging Face name there is fine: the name given at creation decides.
      await me.upload(
        modelId,
        "adapter_config.json",
        peftConfig({ base_model_name_or_path: "meta-llama/Llama-3.2-1B" }),
      );
      expect((await me.validate(modelId)).body).toMatchObject({ state: "READY", baseModel: HEARTH_TINY_REF });
    });

    it("a rank above the limit", async () => {
      const adapter = await writeAdapterToward(path.join(scratch, "high-rank"), "rank rank rank ", {
        rank: MAX_RANK + 2,
      });
      const files = Object.fromEntries(
        await Promise.all(
          (await readdir(adapter.dir)).map(
            async (name) => [name, await readFile(path.join(adapter.dir, name))] as const,
          ),
        ),
      );
      await expectFailure(files, new RegExp(`rank.*${MAX_RANK}`));
    });

    it("a target module Hearth cannot apply", async () => {
      const weights = await safetensors(pair("model.embed_tokens", 4, VOCAB, N_EMBD));
      await expectFailure(
        {
          "adapter_config.json": peftConfig({ target_modules: ["embed_tokens"] }),
          "adapter_model.safetensors": weights,
        },
        /embed_tokens/,
      );
    });

    it("modules_to_save (full weights, not a LoRA)", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      await expectFailure(
        { "adapter_config.json": peftConfig({ modules_to_save: ["lm_head"] }), "adapter_model.safetensors": weights },
        /modules_to_save/,
      );
    });

    it("a tensor whose shape does not match the base model", async () => {
      const weights = await safetensors(pair("lm_head", 4, 100, VOCAB));
      await expectFailure(
        { "adapter_config.json": peftConfig(), "adapter_model.safetensors": weights },
        /lm_head.*shape|shape.*lm_head/s,
      );
    });

    it("a layer the base model does not have", async () => {
      const weights = await safetensors(pair("model.layers.7.self_attn.q_proj", 4, N_EMBD, N_EMBD));
      await expectFailure(
        { "adapter_config.json": peftConfig({ target_modules: ["q_proj"] }), "adapter_model.safetensors": weights },
        /layer.*7|7.*layer/s,
      );
    });

    it("a GGUF adapter for another architecture", async () => {
      const file = path.join(scratch, "qwen.gguf");
      await writeGgufLora(file, {
        architecture: "qwen2",
        name: "wrong",
        alpha: 4,
        weights: [
          {
            tensor: "output.weight",
            pair: { rank: 4, inFeatures: N_EMBD, outFeatures: VOCAB, a: f32(4 * N_EMBD), b: f32(VOCAB * 4) },
          },
        ],
      });
      await expectFailure({ "adapter.gguf": await readFile(file), "hearth.json": hearthJson }, /adapter\.gguf.*qwen2/);
    });

    it("an alpha whose scaled weights overflow, in PEFT and GGUF form", async () => {
      const weights = await safetensors(pair("lm_head", 4, N_EMBD, VOCAB));
      await expectFailure(
        { "adapter_config.json": peftConfig({ lora_alpha: 1e38 }), "adapter_model.safetensors": weights },
        /^adapter_config\.json: lora_alpha is 1e\+38, past 65504, the largest float16/,
      );
      const file = path.join(scratch, "loud.gguf");
      await writeGgufLora(file, {
        architecture: "llama",
        name: "loud",
        alpha: 60_000,
        weights: [
          {
            tensor: "output.weight",
            pair: { rank: 4, inFeatures: N_EMBD, outFeatures: VOCAB, a: f32(4 * N_EMBD, 1), b: f32(VOCAB * 4, 2) },
          },
        ],
      });
      await expectFailure(
        { "adapter.gguf": await readFile(file), "hearth.json": hearthJson },
        /^adapter\.gguf: tensors output\.weight\.lora_b and output\.weight\.lora_a: scaled by 15000 .* may reach 1\.20e\+5/,
      );
    });

    it("a model can be fixed by uploading again and revalidating", async () => {
      const modelId = "fixable";
      await me.createModel(modelId);
      await me.upload(modelId, "adapter_config.json", "{ nope");
      expect((await me.validate(modelId)).status).toBe(400);
      for (const name of await readdir(valid)) {
        expect((await me.upload(modelId, name, await readFile(path.join(valid, name)))).status).toBe(200);
      }
      expect((await me.getModel(modelId)).body.state).toBe("UPLOADING");
      // A file of the other form makes the addon ambiguous, until it is removed again.
      await me.upload(modelId, "adapter.gguf", "x");
      expect((await me.validate(modelId)).body.error.message).toMatch(/not both/);
      expect((await me.call("DELETE", `/v1/accounts/default/models/${modelId}/files/adapter.gguf`)).status).toBe(200);
      expect((await me.getModel(modelId)).body.files.map((f: { name: string }) => f.name)).not.toContain(
        "adapter.gguf",
      );
      const ok = await me.validate(modelId);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ state: "READY", stateReason: null });
    });
  });

  it("checks the base model named at creation", async () => {
    const reply = await me.createModel("orphan", { baseModel: "accounts/hearth/models/missing" });
    expect(reply.status).toBe(400);
    expect(reply.body.error.param).toBe("model.baseModel");
    expect((await me.getModel("orphan")).status).toBe(404);
  });

  it("refuses bad model IDs and taken ones", async () => {
    for (const id of ["Upper", "-lead", "a".repeat(64), "under_score", ""]) {
      const reply = await me.createModel(id);
      expect(reply.status, id).toBe(400);
      expect(reply.body.error.param).toBe("modelId");
    }
    expect((await me.createModel("taken")).status).toBe(201);
    const again = await me.createModel("taken");
    expect(again.status).toBe(409);
  });
});
