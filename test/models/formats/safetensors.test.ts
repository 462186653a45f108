import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors.js";
import { readSafetensors, readSafetensorsHeader } from "../../../src/models/formats/safetensors-reader.js";
import { writeSafetensors } from "../../../src/models/formats/safetensors-writer.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-st-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const values = Float32Array.from([0, 1, -2, 0.5, 1024, -0.125]);

describe("safetensors", () => {
  it("round-trips F32, F16 and BF16 tensors and metadata", async () => {
    const file = path.join(dir, "rt.safetensors");
    await writeSafetensors(
      file,
      [
        { name: "x.f32", dtype: "F32", shape: [2, 3], data: Float32Array.from([0.1, 0.2, 0.3, 1e-8, -7, 3]) },
        { name: "x.f16", dtype: "F16", shape: [3, 2], data: values },
        { name: "x.bf16", dtype: "BF16", shape: [6], data: values },
        { name: "x.empty", dtype: "F32", shape: [0, 4], data: new Float32Array(0) },
      ],
      { format: "pt" },
    );
    const bytes = await readFile(file);
    const headerLength = Number(bytes.readBigUInt64LE(0));
    expect(headerLength % 8).toBe(0);
    const json = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8"));
    expect(json.__metadata__).toEqual({ format: "pt" });
    expect(json["x.f16"]).toEqual({ dtype: "F16", shape: [3, 2], data_offsets: [24, 36] });

    const { header, tensors } = await readSafetensors(file);
    expect(header.metadata).toEqual({ format: "pt" });
    expect(header.tensors.map((t) => [t.name, t.dtype, t.shape])).toEqual([
      ["x.f32", "F32", [2, 3]],
      ["x.f16", "F16", [3, 2]],
      ["x.bf16", "BF16", [6]],
      ["x.empty", "F32", [0, 4]],
    ]);
    expect(tensors.get("x.f32")).toEqual(Float32Array.from([0.1, 0.2, 0.3, 1e-8, -7, 3]));
    expect(tensors.get("x.f16")).toEqual(values);
    expect(tensors.get("x.bf16")).toEqual(values);
    expect(tensors.get("x.empty")).toEqual(new Float32Array(0));
  });

  describe("rejects", () => {
    async function problem(bytes: Uint8Array): Promise<string> {
      const file = path.join(dir, "case.safetensors");
      await writeFile(file, bytes);
      const error = await readSafetensorsHeader(file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("invalid_request");
      expect((error as AppError).message).toMatch(/^case\.safetensors: /);
      return (error as AppError).message;
    }

    function build(header: unknown, dataBytes: number, rawJson?: string | Buffer): Buffer {
      const json = Buffer.isBuffer(rawJson) ? rawJson : Buffer.from(rawJson ?? JSON.stringify(header));
      const prefix = Buffer.alloc(8);
      prefix.writeBigUInt64LE(BigInt(json.length));
      return Buffer.concat([prefix, json, Buffer.alloc(dataBytes)]);
    }

    const tensor = (over: Record<string, unknown> = {}) => ({
      dtype: "F32",
      shape: [2, 2],
      data_offsets: [0, 16],
      ...over,
    });

    it("a file too short to hold a header length", async () => {
      expect(await problem(Buffer.from([1, 2, 3]))).toMatch(/only 3 bytes/);
    });

    it("a header length over the limit or past the end of the file", async () => {
      const huge = Buffer.alloc(16);
      huge.writeBigUInt64LE(200n * 1024n * 1024n);
      expect(await problem(huge)).toMatch(/exceeds 104857600 bytes/);
      const long = Buffer.alloc(16);
      long.writeBigUInt64LE(100n);
      expect(await problem(long)).toMatch(/exceeds the file size 16/);
    });

    it("a header that is not JSON, or not an object", async () => {
      expect(await problem(build(null, 0, "{not json"))).toMatch(/not valid UTF-8 JSON/);
      expect(await problem(build([1, 2], 0))).toMatch(/not a JSON object/);
      expect(await problem(build(null, 0, Buffer.from([0x22, 0xff, 0x22])))).toMatch(/not valid UTF-8 JSON/);
    });

    it("bad metadata", async () => {
      expect(await problem(build({ __metadata__: { a: 1 } }, 0))).toMatch(/__metadata__.a is not a string/);
      expect(await problem(build({ __metadata__: "x" }, 0))).toMatch(/__metadata__ is not an object/);
    });

    it("an unsupported dtype", async () => {
      expect(await problem(build({ t: tensor({ dtype: "I64", data_offsets: [0, 32] }) }, 32))).toMatch(
        /tensor t has unsupported dtype I64 \(supported: F32, F16, BF16\)/,
      );
    });

    it("bad shapes and offsets", async () => {
      expect(await problem(build({ t: tensor({ shape: [2, -2] }) }, 16))).toMatch(/invalid shape/);
      expect(await problem(build({ t: tensor({ shape: "2x2" }) }, 16))).toMatch(/invalid shape/);
      expect(await problem(build({ t: tensor({ data_offsets: [0] }) }, 16))).toMatch(/invalid data_offsets/);
      expect(await problem(build({ t: tensor({ data_offsets: [8, 4] }) }, 16))).toMatch(/outside the data section/);
      expect(await problem(build({ t: tensor() }, 12))).toMatch(/\[0, 16\] are outside the data section \(12 bytes\)/);
    });

    it("a size that does not match the shape", async () => {
      expect(await problem(build({ t: tensor({ data_offsets: [0, 12] }) }, 16))).toMatch(
        /tensor t has 12 bytes of data, but shape \[2, 2\] of F32 needs 16/,
      );
      expect(await problem(build({ t: tensor({ dtype: "BF16" }) }, 16))).toMatch(/needs 8/);
    });

    it("overlapping tensors", async () => {
      expect(await problem(build({ a: tensor(), b: tensor({ data_offsets: [8, 24] }) }, 24))).toMatch(
        /tensors a and b overlap/,
      );
    });

    it("a missing file", async () => {
      await expect(readSafetensorsHeader(path.join(dir, "absent.safetensors"))).rejects.toThrow(
        /absent.safetensors: cannot open file/,
      );
    });
  });
});
