import path from "node:path";
import { fileProblem, openModelFile } from "./model-file-error.js";
import {
  GGML_MAX_DIMS,
  GGML_MAX_NAME,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  alignUp,
  fixedScalarSize,
  ggmlTensorBytes,
  ggmlTypeName,
  ggufValueTypeName,
  type GgmlTypeName,
  type GgufScalarType,
  type GgufValue,
} from "./gguf-types.js";
import { decodeBf16, decodeF16 } from "./half-float.js";
import { Cursor, fileSource, memorySource, type ByteSource } from "./byte-cursor.js";

/**
 * Reads the header of a GGUF file (metadata and tensor infos) without reading tensor
 * data, defensively: every count, length and offset is checked against limits and
 * against the file's size before it is trusted, and every problem is an AppError
 * ("invalid_request", "<file>: <problem>").
 */

export interface GgufTensorInfo {
  name: string;
  type: GgmlTypeName;
  /** numpy order, outermost first (the reverse of `dims`). */
  shape: number[];
  /** GGUF order, innermost first (`ne[0]`, `ne[1]`, ...). */
  dims: number[];
  /** Absolute position of the tensor's data in the file. */
  offset: number;
  byteLength: number;
}

export interface GgufHeader {
  version: number;
  alignment: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Absolute position of the data section. */
  dataOffset: number;
  fileSize: number;
}

export interface GgufReadLimits {
  /** Largest header (metadata + tensor infos) read into memory. */
  maxHeaderBytes: number;
  maxMetadataEntries: number;
  maxTensors: number;
  maxStringBytes: number;
  maxArrayLength: number;
}

export const defaultGgufReadLimits: GgufReadLimits = {
  maxHeaderBytes: 256 * 1024 * 1024,
  maxMetadataEntries: 65_536,
  maxTensors: 1_000_000,
  maxStringBytes: 16 * 1024 * 1024,
  maxArrayLength: 16 * 1024 * 1024,
};

/** `label` names the file in error messages (default: its base name). */
export async function readGgufHeader(
  file: string,
  limits: Partial<GgufReadLimits> = {},
  label = path.basename(file),
): Promise<GgufHeader> {
  const lim = { ...defaultGgufReadLimits, ...limits };
  const handle = await openModelFile(file, label);
  try {
    const { size } = await handle.stat();
    return parseGguf(new Cursor(fileSource(handle.fd), size, label, lim.maxHeaderBytes), size, label, lim);
  } finally {
    await handle.close();
  }
}

/** Parses a header from the first bytes of a file of `fileSize` bytes, or from a source of them. */
export function parseGgufHeader(
  bytes: Uint8Array | ByteSource,
  fileSize: number,
  label = "gguf",
  limits: GgufReadLimits = defaultGgufReadLimits,
): GgufHeader {
  const source = bytes instanceof Uint8Array ? memorySource(bytes) : bytes;
  return parseGguf(new Cursor(source, fileSize, label, limits.maxHeaderBytes), fileSize, label, limits);
}

function parseGguf(r: Cursor, fileSize: number, label: string, limits: GgufReadLimits): GgufHeader {
  if (fileSize < 24) throw fileProblem(label, `not a GGUF file (only ${fileSize} bytes)`);
  const magic = r.u32("magic");
  if (magic !== GGUF_MAGIC) throw fileProblem(label, "not a GGUF file (bad magic)");
  const version = r.u32("version");
  if (version !== 2 && version !== 3) throw fileProblem(label, `unsupported GGUF version ${version}`);
  const tensorCount = r.count("tensor count", limits.maxTensors, 24);
  const kvCount = r.count("metadata count", limits.maxMetadataEntries, 13);

  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = r.string(`metadata key ${i}`, limits.maxStringBytes);
    if (key.length === 0) throw fileProblem(label, `metadata key ${i} is empty`);
    if (metadata.has(key)) throw fileProblem(label, `duplicate metadata key ${key}`);
    metadata.set(key, readValue(r, key, limits));
  }

  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const alignmentValue = metadata.get("general.alignment");
  if (alignmentValue !== undefined) {
    if (alignmentValue.type !== "uint32") throw fileProblem(label, "general.alignment must be a uint32");
    alignment = alignmentValue.value;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0)
      throw fileProblem(label, `general.alignment ${alignment} is not a power of 2`);
  }

  const raw: { name: string; dims: number[]; type: GgmlTypeName; relative: number }[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = r.string(`tensor ${i} name`, GGML_MAX_NAME - 1);
    if (names.has(name)) throw fileProblem(label, `duplicate tensor ${name}`);
    names.add(name);
    const nDims = r.u32(`tensor ${name} dimension count`);
    if (nDims > GGML_MAX_DIMS)
      throw fileProblem(label, `tensor ${name} has ${nDims} dimensions (at most ${GGML_MAX_DIMS})`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) {
      const n = r.u64(`tensor ${name} dimension`);
      if (n < 1n || n > BigInt(Number.MAX_SAFE_INTEGER))
        throw fileProblem(label, `tensor ${name} has a bad dimension ${n}`);
      dims.push(Number(n));
    }
    const code = r.u32(`tensor ${name} type`);
    const type = ggmlTypeName(code);
    if (type === undefined) throw fileProblem(label, `tensor ${name} has unknown type ${code}`);
    const relative = r.u64(`tensor ${name} offset`);
    if (relative > BigInt(fileSize))
      throw fileProblem(label, `tensor ${name} offset ${relative} is past the end of the file`);
    raw.push({ name, dims, type, relative: Number(relative) });
  }
  const dataOffset = alignUp(r.position, alignment);
  if (tensorCount > 0 && dataOffset > fileSize)
    throw fileProblem(label, "data section starts past the end of the file");

  const tensors = raw.map(({ name, dims, type, relative }): GgufTensorInfo => {
    const shape = [...dims].reverse();
    const elements = dims.reduce((a, b) => a * b, 1);
    if (!Number.isSafeInteger(elements)) throw fileProblem(label, `tensor ${name} is too large`);
    const byteLength = ggmlTensorBytes(type, shape);
    if (typeof byteLength === "string") throw fileProblem(label, `tensor ${name}: ${byteLength}`);
    if (relative % alignment !== 0)
      throw fileProblem(label, `tensor ${name} offset ${relative} is not aligned to ${alignment}`);
    const offset = dataOffset + relative;
    if (offset + byteLength > fileSize) {
      throw fileProblem(
        label,
        `tensor ${name} data (${byteLength} bytes at ${offset}) extends past the end of the file (${fileSize} bytes)`,
      );
    }
    return { name, type, shape, dims, offset, byteLength };
  });
  const byOffset = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1]!;
    const cur = byOffset[i]!;
    if (prev.offset + prev.byteLength > cur.offset)
      throw fileProblem(label, `tensors ${prev.name} and ${cur.name} overlap`);
  }
  return { version, alignment, metadata, tensors, dataOffset, fileSize };
}

function readValue(r: Cursor, key: string, limits: GgufReadLimits): GgufValue {
  const code = r.u32(`type of ${key}`);
  const type = ggufValueTypeName(code);
  if (type === undefined) throw fileProblem(r.label, `metadata ${key} has unknown type ${code}`);
  if (type !== "array") return readScalar(r, key, type, limits) as GgufValue;
  const itemCode = r.u32(`item type of ${key}`);
  const itemType = ggufValueTypeName(itemCode);
  if (itemType === undefined) throw fileProblem(r.label, `metadata ${key} has unknown item type ${itemCode}`);
  if (itemType === "array") throw fileProblem(r.label, `metadata ${key} is an array of arrays (not supported)`);
  const minItemBytes = itemType === "string" ? 8 : fixedScalarSize[itemType];
  const n = r.count(`length of ${key}`, limits.maxArrayLength, minItemBytes);
  const items: unknown[] = new Array(n);
  for (let i = 0; i < n; i++) items[i] = readScalar(r, key, itemType, limits).value;
  return { type: "array", itemType, value: items } as GgufValue;
}

function readScalar(r: Cursor, key: string, type: GgufScalarType, limits: GgufReadLimits) {
  switch (type) {
    case "string":
      return { type, value: r.string(key, limits.maxStringBytes) };
    case "bool": {
      const b = r.view(1, key).getUint8(0);
      if (b > 1) throw fileProblem(r.label, `metadata ${key} has a bool that is neither 0 nor 1`);
      return { type, value: b === 1 };
    }
    case "uint64":
      return { type, value: r.u64(key) };
    case "int64":
      return { type, value: r.view(8, key).getBigInt64(0, true) };
    default: {
      const v = r.view(fixedScalarSize[type], key);
      const value = {
        uint8: () => v.getUint8(0),
        int8: () => v.getInt8(0),
        uint16: () => v.getUint16(0, true),
        int16: () => v.getInt16(0, true),
        uint32: () => v.getUint32(0, true),
        int32: () => v.getInt32(0, true),
        float32: () => v.getFloat32(0, true),
        float64: () => v.getFloat64(0, true),
      }[type]();
      return { type, value };
    }
  }
}

/** One tensor's values as float32, for the float types (F32, F16, BF16). */
export async function readGgufTensor(
  file: string,
  info: GgufTensorInfo,
  label = path.basename(file),
): Promise<Float32Array> {
  const decode = tensorDecoders[info.type as keyof typeof tensorDecoders];
  if (decode === undefined)
    throw fileProblem(label, `tensor ${info.name} has type ${info.type}, which Hearth cannot read`);
  const bytes = new Uint8Array(info.byteLength);
  const handle = await openModelFile(file, label);
  try {
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, info.offset);
    if (bytesRead !== bytes.length) throw fileProblem(label, `file is truncated inside tensor ${info.name}`);
  } finally {
    await handle.close();
  }
  return decode(bytes);
}

const tensorDecoders = {
  F32: (bytes: Uint8Array) => new Float32Array(bytes.buffer, 0, bytes.length / 4),
  F16: (bytes: Uint8Array) => decodeF16(new Uint16Array(bytes.buffer, 0, bytes.length / 2)),
  BF16: (bytes: Uint8Array) => decodeBf16(new Uint16Array(bytes.buffer, 0, bytes.length / 2)),
};
