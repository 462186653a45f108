import { open } from "node:fs/promises";
import os from "node:os";
import {
  GGML_MAX_NAME,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VERSION,
  alignUp,
  fixedScalarSize,
  ggmlTensorBytes,
  ggmlTypes,
  ggufValueTypeCodes,
  type GgufScalarType,
  type GgufValue,
} from "./gguf-types.js";
import { encodeF16 } from "./half-float.js";
import { Q8_0_BLOCK, quantizeQ8_0 } from "./q8-0.js";

/**
 * Writes GGUF v3 files. Metadata is encoded in memory (it is small); tensor data is
 * produced and written one tensor at a time, in chunks, so a file never has to exist
 * as one buffer.
 */

export type GgufWritableType = "F32" | "F16" | "Q8_0";

export interface GgufTensorInput {
  name: string;
  type: GgufWritableType;
  /** numpy order, outermost first: a [n_out, n_in] weight is stored with GGUF dims [n_in, n_out]. */
  shape: readonly number[];
  /** Row-major values, or a function producing them when the tensor is written (keeps memory flat). */
  data: Float32Array | (() => Float32Array | Promise<Float32Array>);
}

export interface GgufWriteInput {
  /** Written in insertion order; `general.alignment` is added when absent. */
  metadata: Readonly<Record<string, GgufValue>>;
  tensors: readonly GgufTensorInput[];
  alignment?: number;
}

const CHUNK_ELEMENTS = 1 << 20; // a multiple of every block size used here

export async function writeGguf(path: string, input: GgufWriteInput): Promise<void> {
  if (os.endianness() !== "LE") throw new Error("GGUF writing needs a little-endian host");
  const alignment = input.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  if (alignment <= 0 || (alignment & (alignment - 1)) !== 0)
    throw new Error(`alignment ${alignment} is not a power of 2`);
  const metadata: Record<string, GgufValue> = { ...input.metadata };
  const given = metadata["general.alignment"];
  if (given === undefined) metadata["general.alignment"] = { type: "uint32", value: alignment };
  else if (given.type !== "uint32" || given.value !== alignment)
    throw new Error("general.alignment disagrees with the alignment option");

  const layout = layoutTensors(input.tensors, alignment);
  const header = new ByteBuilder();
  header.u32(GGUF_MAGIC);
  header.u32(GGUF_VERSION);
  header.u64(BigInt(input.tensors.length));
  header.u64(BigInt(Object.keys(metadata).length));
  for (const [key, value] of Object.entries(metadata)) {
    header.string(key);
    writeValue(header, key, value);
  }
  for (const [i, t] of input.tensors.entries()) {
    header.string(t.name);
    header.u32(t.shape.length);
    for (const d of [...t.shape].reverse()) header.u64(BigInt(d));
    header.u32(ggmlTypes[t.type].code);
    header.u64(BigInt(layout[i]!.offset));
  }
  header.pad(alignment);

  const file = await open(path, "w");
  try {
    let position = 0;
    const write = async (bytes: Uint8Array) => {
      await file.write(bytes, 0, bytes.length, position);
      position += bytes.length;
    };
    await write(header.bytes());
    const dataStart = position;
    for (const [i, t] of input.tensors.entries()) {
      const values = typeof t.data === "function" ? await t.data() : t.data;
      if (values.length !== layout[i]!.elements) {
        throw new Error(`tensor ${t.name}: ${values.length} values for shape [${t.shape.join(", ")}]`);
      }
      for (let at = 0; at < values.length; at += CHUNK_ELEMENTS) {
        await write(encodeTensorChunk(t.type, values.subarray(at, at + CHUNK_ELEMENTS)));
      }
      const padded = dataStart + alignUp(position - dataStart, alignment);
      if (padded > position) await write(new Uint8Array(padded - position));
    }
  } finally {
    await file.close();
  }
}

function layoutTensors(tensors: readonly GgufTensorInput[], alignment: number): { offset: number; elements: number }[] {
  const names = new Set<string>();
  let offset = 0;
  return tensors.map((t) => {
    if (names.has(t.name)) throw new Error(`duplicate tensor name ${t.name}`);
    if (t.name.length === 0 || Buffer.byteLength(t.name) >= GGML_MAX_NAME)
      throw new Error(`bad tensor name ${JSON.stringify(t.name)}`);
    names.add(t.name);
    if (t.shape.length < 1 || t.shape.length > 4 || t.shape.some((d) => !Number.isSafeInteger(d) || d < 1)) {
      throw new Error(`tensor ${t.name}: bad shape [${t.shape.join(", ")}]`);
    }
    const bytes = ggmlTensorBytes(t.type, t.shape);
    if (typeof bytes === "string") throw new Error(`tensor ${t.name}: ${bytes}`);
    const entry = { offset, elements: t.shape.reduce((a, b) => a * b, 1) };
    offset += alignUp(bytes, alignment);
    return entry;
  });
}

function encodeTensorChunk(type: GgufWritableType, values: Float32Array): Uint8Array {
  switch (type) {
    case "F32":
      return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    case "F16": {
      const half = encodeF16(values);
      return new Uint8Array(half.buffer, half.byteOffset, half.byteLength);
    }
    case "Q8_0":
      if (values.length % Q8_0_BLOCK !== 0) throw new Error("Q8_0 tensor chunk is not whole blocks");
      return quantizeQ8_0(values);
  }
}

function writeValue(out: ByteBuilder, key: string, value: GgufValue): void {
  if (value.type === "array") {
    out.u32(ggufValueTypeCodes.array);
    out.u32(ggufValueTypeCodes[value.itemType]);
    out.u64(BigInt(value.value.length));
    for (const item of value.value) writeScalar(out, key, value.itemType, item);
  } else {
    out.u32(ggufValueTypeCodes[value.type]);
    writeScalar(out, key, value.type, value.value);
  }
}

function writeScalar(
  out: ByteBuilder,
  key: string,
  type: GgufScalarType,
  value: number | bigint | boolean | string,
): void {
  const fail = () => new Error(`metadata ${key}: ${String(value)} is not a valid ${type}`);
  if (type === "string") {
    if (typeof value !== "string") throw fail();
    out.string(value);
    return;
  }
  if (type === "bool") {
    if (typeof value !== "boolean") throw fail();
    out.view(1).setUint8(0, value ? 1 : 0);
    return;
  }
  if (type === "uint64" || type === "int64") {
    if (typeof value !== "bigint") throw fail();
    if (type === "uint64") out.u64(value);
    else out.view(8).setBigInt64(0, value, true);
    return;
  }
  if (typeof value !== "number") throw fail();
  const v = out.view(fixedScalarSize[type]);
  if (type === "float32") return v.setFloat32(0, value, true);
  if (type === "float64") return v.setFloat64(0, value, true);
  const [min, max] = intRanges[type];
  if (!Number.isInteger(value) || value < min || value > max) throw fail();
  switch (type) {
    case "uint8":
      return v.setUint8(0, value);
    case "int8":
      return v.setInt8(0, value);
    case "uint16":
      return v.setUint16(0, value, true);
    case "int16":
      return v.setInt16(0, value, true);
    case "uint32":
      return v.setUint32(0, value, true);
    case "int32":
      return v.setInt32(0, value, true);
  }
}

const intRanges = {
  uint8: [0, 0xff],
  int8: [-0x80, 0x7f],
  uint16: [0, 0xffff],
  int16: [-0x8000, 0x7fff],
  uint32: [0, 0xffffffff],
  int32: [-0x80000000, 0x7fffffff],
} as const;

/** A growable little-endian byte buffer for the header. */
class ByteBuilder {
  private buf = new Uint8Array(4096);
  private length = 0;

  view(size: number): DataView {
    if (this.length + size > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + size));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
    const v = new DataView(this.buf.buffer, this.length, size);
    this.length += size;
    return v;
  }

  u32(value: number): void {
    this.view(4).setUint32(0, value, true);
  }

  u64(value: bigint): void {
    this.view(8).setBigUint64(0, value, true);
  }

  string(value: string): void {
    const bytes = Buffer.from(value, "utf8");
    this.u64(BigInt(bytes.length));
    const v = this.view(bytes.length);
    new Uint8Array(v.buffer, v.byteOffset, bytes.length).set(bytes);
  }

  pad(alignment: number): void {
    this.view(alignUp(this.length, alignment) - this.length);
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}
