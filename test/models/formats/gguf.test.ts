import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors.js";
import { memorySource, type ByteSource } from "../../../src/models/formats/byte-cursor.js";
import { parseGgufHeader, readGgufHeader } from "../../../src/models/formats/gguf-reader.js";
import { gguf, type GgufValue } from "../../../src/models/formats/gguf-types.js";
import { writeGguf, type GgufTensorInput } from "../../../src/models/formats/gguf-writer.js";
import { decodeF16 } from "../../../src/models/formats/half-float.js";
import { dequantizeQ8_0 } from "../../../src/models/formats/q8-0.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-gguf-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const metadata: Record<string, GgufValue> = {
  "general.architecture": gguf.str("llama"),
  "general.name": gguf.str("round trip ☕"),
  "test.u8": gguf.u8(200),
  "test.i32": gguf.i32(-123456),
  "test.u32": gguf.u32(4_000_000_000),
  "test.u64": gguf.u64(2n ** 40n + 3n),
  "test.f32": gguf.f32(0.25),
  "test.bool": gguf.bool(true),
  "test.strings": gguf.strings(["a", "", "ü", "<|endoftext|>"]),
  "test.i32s": gguf.i32s([1, -2, 3]),
  "test.f32s": gguf.f32s([1.5, -2.5]),
  "test.empty": gguf.strings([]),
};

function ramp(n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.fround(((i % 97) - 48) * 0.03125 * scale));
}

const tensors: GgufTensorInput[] = [
  { name: "a.weight", type: "F32", shape: [3, 5], data: ramp(15) },
  { name: "b.weight", type: "F16", shape: [7], data: ramp(7) },
  { name: "c.weight", type: "Q8_0", shape: [2, 64], data: () => ramp(128, 0.5) },
];

describe("GGUF writer and reader", () => {
  it("round-trips metadata and tensor infos", async () => {
    const file = path.join(dir, "round.gguf");
    await writeGguf(file, { metadata, tensors });
    const header = await readGgufHeader(file);
    expect(header.version).toBe(3);
    expect(header.alignment).toBe(32);
    expect(header.metadata.get("general.alignment")).toEqual({ type: "uint32", value: 32 });
    for (const [key, value] of Object.entries(metadata)) expect(header.metadata.get(key)).toEqual(value);
    expect(header.tensors.map((t) => [t.name, t.type, t.shape, t.dims])).toEqual([
      ["a.weight", "F32", [3, 5], [5, 3]],
      ["b.weight", "F16", [7], [7]],
      ["c.weight", "Q8_0", [2, 64], [64, 2]],
    ]);
    expect(header.dataOffset % 32).toBe(0);
    for (const t of header.tensors) expect((t.offset - header.dataOffset) % 32).toBe(0);
    const bytes = await readFile(file);
    const [a, b, c] = header.tensors;
    expect(
      new Float32Array(bytes.buffer.slice(bytes.byteOffset + a!.offset, bytes.byteOffset + a!.offset + a!.byteLength)),
    ).toEqual(ramp(15));
    const half = new Uint16Array(
      bytes.buffer.slice(bytes.byteOffset + b!.offset, bytes.byteOffset + b!.offset + b!.byteLength),
    );
    expect(decodeF16(half)).toEqual(ramp(7)); // these values are exact in F16
    const q = dequantizeQ8_0(bytes.subarray(c!.offset, c!.offset + c!.byteLength));
    const original = ramp(128, 0.5);
    for (let i = 0; i < q.length; i++) expect(Math.abs(q[i]! - original[i]!)).toBeLessThan(0.01);
    expect(header.fileSize).toBe(bytes.length);
  });

  it("writes files node-llama-cpp's own GGUF parser agrees with", async () => {
    const file = path.join(dir, "cross.gguf");
    await writeGguf(file, { metadata, tensors });
    const info = await readGgufFileInfo(file, { logWarnings: false });
    expect(info.version).toBe(3);
    expect(info.metadata.general.name).toBe("round trip ☕");
    const test = (info.metadata as unknown as { test: Record<string, unknown> }).test;
    expect(test.u32).toBe(4_000_000_000);
    expect(test.strings).toEqual(["a", "", "ü", "<|endoftext|>"]);
    expect(info.tensorInfo?.map((t) => [t.name, t.dimensions.map(Number), Number(t.offset)])).toEqual(
      (await readGgufHeader(file)).tensors.map((t) => [t.name, t.dims, t.offset - (info.infoEndOffset ?? 0)]),
    );
  });

  it("is deterministic", async () => {
    const one = path.join(dir, "one.gguf");
    const two = path.join(dir, "two.gguf");
    await writeGguf(one, { metadata, tensors });
    await writeGguf(two, { metadata, tensors });
    expect((await readFile(one)).equals(await readFile(two))).toBe(true);
  });

  it("refuses to write inconsistent input", async () => {
    const file = path.join(dir, "bad.gguf");
    await expect(
      writeGguf(file, { metadata, tensors: [{ name: "x", type: "F32", shape: [2, 2], data: ramp(3) }] }),
    ).rejects.toThrow(/3 values/);
    await expect(
      writeGguf(file, { metadata, tensors: [{ name: "x", type: "Q8_0", shape: [1, 30], data: ramp(30) }] }),
    ).rejects.toThrow(/block size/);
    await expect(writeGguf(file, { metadata: { "x.y": gguf.u8(300) }, tensors: [] })).rejects.toThrow(
      /not a valid uint8/,
    );
  });
});

describe("GGUF reader rejections", () => {
  let good: Buffer;
  beforeAll(async () => {
    const file = path.join(dir, "good.gguf");
    await writeGguf(file, { metadata, tensors });
    good = await readFile(file);
  });

  async function rejects(bytes: Uint8Array, pattern: RegExp): Promise<void> {
    const file = path.join(dir, "case.gguf");
    await writeFile(file, bytes);
    const error = await readGgufHeader(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("invalid_request");
    expect((error as AppError).message).toMatch(/^case\.gguf: /);
    expect((error as AppError).message).toMatch(pattern);
  }

  it("rejects a missing file", async () => {
    await expect(readGgufHeader(path.join(dir, "nope.gguf"))).rejects.toThrow(
      /nope\.gguf: cannot open file \(ENOENT\)/,
    );
  });

  it("rejects garbage and empty files", async () => {
    await rejects(Buffer.from("this is not a model file, just some text padding it out"), /bad magic/);
    await rejects(Buffer.alloc(0), /not a GGUF file/);
  });

  it("rejects unsupported versions", async () => {
    const bytes = Buffer.from(good);
    bytes.writeUInt32LE(1, 4);
    await rejects(bytes, /unsupported GGUF version 1/);
  });

  it("rejects truncated files", async () => {
    await rejects(good.subarray(0, 200), /truncated/);
    const header = await readGgufHeader(path.join(dir, "good.gguf"));
    const last = header.tensors.at(-1)!;
    await rejects(good.subarray(0, last.offset + 10), /extends past the end of the file/);
  });

  it("rejects absurd counts and lengths", async () => {
    const bytes = Buffer.from(good);
    bytes.writeBigUInt64LE(2n ** 40n, 16); // metadata count
    await rejects(bytes, /metadata count .* exceeds the limit/);
    const b2 = Buffer.from(good);
    b2.writeBigUInt64LE(50_000n, 16);
    await rejects(b2, /cannot fit in the .* bytes left/);
    const b3 = Buffer.from(good);
    b3.writeBigUInt64LE(2n ** 62n, 24); // length of the first key
    await rejects(b3, /bytes long \(limit/);
  });

  it("streams the header: each byte read once, a window at a time, never the whole header", async () => {
    const file = path.join(dir, "big-header.gguf");
    const strings = Array.from({ length: 40_000 }, (_, i) => `token-${i}-${"x".repeat(i % 50)}`);
    await writeGguf(file, { metadata: { ...metadata, "tokenizer.ggml.tokens": gguf.strings(strings) }, tensors });
    const bytes = new Uint8Array(await readFile(file));
    const reads: number[] = [];
    const counting: ByteSource = {
      read(position, length) {
        reads.push(length);
        return memorySource(bytes).read(position, length);
      },
    };
    const header = parseGgufHeader(counting, bytes.length);
    expect(header).toEqual(await readGgufHeader(file));
    // Windows of 64 KiB, forward only: no byte is read twice, and no read holds the header.
    expect(header.dataOffset).toBeGreaterThan(1024 * 1024);
    expect(Math.max(...reads)).toBe(64 * 1024);
    expect(reads.reduce((a, b) => a + b, 0)).toBeLessThan(header.dataOffset + 64 * 1024);
    expect(header.metadata.get("tokenizer.ggml.tokens")).toMatchObject({
      value: expect.arrayContaining([`token-39999-${"x".repeat(49)}`]),
    });
  });

  it("stops at the per-field limits it is given, naming the field", async () => {
    const file = path.join(dir, "limits.gguf");
    await writeGguf(file, {
      metadata: {
        ...metadata,
        "big.array": gguf.f32s(new Array(70_000).fill(0)),
        "big.string": gguf.str("y".repeat(100_000)),
      },
      tensors,
    });
    const limits = { maxArrayLength: 65_536, maxStringBytes: 1024 * 1024, maxHeaderBytes: 1024 * 1024 };
    await expect(readGgufHeader(file, limits)).rejects.toThrow(/length of big.array 70000 exceeds the limit of 65536/);
    await expect(readGgufHeader(file, { ...limits, maxArrayLength: 100_000, maxStringBytes: 1000 })).rejects.toThrow(
      /big.string is 100000 bytes long \(limit 1000\)/,
    );
    await expect(readGgufHeader(file, { maxHeaderBytes: 200_000 })).rejects.toThrow(
      /header is larger than 200000 bytes/,
    );
    await expect(readGgufHeader(file, { maxTensors: 2 })).rejects.toThrow(/tensor count 3 exceeds the limit of 2/);
  });

  it("rejects an unknown value type", async () => {
    const bytes = Buffer.from(good);
    const keyLength = Number(bytes.readBigUInt64LE(24));
    bytes.writeUInt32LE(99, 32 + keyLength);
    await rejects(bytes, /unknown type 99/);
  });

  it("rejects tensors that are misplaced, misaligned or of unknown type", async () => {
    const header = await readGgufHeader(path.join(dir, "good.gguf"));
    // Locate the last tensor info: name, n_dims, dims, type, offset (right before the padding).
    const name = Buffer.from("c.weight");
    const at = good.lastIndexOf(name) + name.length;
    const typeAt = at + 4 + 2 * 8;
    const offsetAt = typeAt + 4;
    const b1 = Buffer.from(good);
    b1.writeBigUInt64LE(BigInt(header.tensors[0]!.offset - header.dataOffset), offsetAt);
    await rejects(b1, /overlap/);
    const b2 = Buffer.from(good);
    b2.writeBigUInt64LE(BigInt(header.tensors[2]!.offset - header.dataOffset + 4), offsetAt);
    await rejects(b2, /not aligned/);
    const b3 = Buffer.from(good);
    b3.writeUInt32LE(77, typeAt);
    await rejects(b3, /unknown type 77/);
    const b4 = Buffer.from(good);
    b4.writeUInt32LE(9, at);
    await rejects(b4, /9 dimensions/);
  });
});
