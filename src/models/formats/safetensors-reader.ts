import { isJsonObject, parseUtf8Json } from "./json-object.js";
import path from "node:path";
import { fileProblem, openModelFile } from "./model-file-error.js";
import { decodeBf16, decodeF16 } from "./half-float.js";
import {
  SAFETENSORS_MAX_HEADER_BYTES,
  isSafetensorsDtype,
  safetensorsDtypeBytes,
  type SafetensorsTensorInfo,
} from "./safetensors-format.js";

/**
 * A defensive safetensors reader: the header is validated completely (length bounds,
 * JSON shape, supported dtypes, offsets inside the data section, no overlaps, sizes
 * matching shapes) before any tensor is read. Problems are AppError("invalid_request",
 * "<file>: <problem>").
 */

export interface SafetensorsHeader {
  file: string;
  /** How error messages name the file. */
  label: string;
  metadata: Record<string, string>;
  tensors: SafetensorsTensorInfo[];
  /** Absolute position of the data section. */
  dataStart: number;
  fileSize: number;
}

/** `label` names the file in error messages (default: its base name). */
export async function readSafetensorsHeader(
  file: string,
  label = path.basename(file),
  limits: { maxHeaderBytes?: number; maxTensors?: number } = {},
): Promise<SafetensorsHeader> {
  const maxHeaderBytes = limits.maxHeaderBytes ?? SAFETENSORS_MAX_HEADER_BYTES;
  const handle = await openModelFile(file, label);
  try {
    const { size } = await handle.stat();
    if (size < 8) throw fileProblem(label, `not a safetensors file (only ${size} bytes)`);
    const lengthBytes = Buffer.alloc(8);
    await handle.read(lengthBytes, 0, 8, 0);
    const headerLength = lengthBytes.readBigUInt64LE(0);
    if (headerLength > BigInt(maxHeaderBytes)) {
      throw fileProblem(label, `header length ${headerLength} exceeds ${maxHeaderBytes} bytes`);
    }
    if (headerLength > BigInt(size - 8))
      throw fileProblem(label, `header length ${headerLength} exceeds the file size ${size}`);
    const n = Number(headerLength);
    const json = Buffer.alloc(n);
    const { bytesRead } = await handle.read(json, 0, n, 8);
    if (bytesRead !== n) throw fileProblem(label, "file is truncated");
    const { metadata, tensors } = parseSafetensorsHeader(json, size - 8 - n, label, limits.maxTensors);
    return { file, label, metadata, tensors, dataStart: 8 + n, fileSize: size };
  } finally {
    await handle.close();
  }
}

/** Validates a header's JSON bytes against a data section of `dataSize` bytes. */
export function parseSafetensorsHeader(
  json: Uint8Array,
  dataSize: number,
  label: string,
  maxTensors = Number.MAX_SAFE_INTEGER,
): { metadata: Record<string, string>; tensors: SafetensorsTensorInfo[] } {
  const decoded = parseUtf8Json(json);
  if (!decoded.ok) throw fileProblem(label, "header is not valid UTF-8 JSON");
  const parsed = decoded.value;
  if (!isJsonObject(parsed)) throw fileProblem(label, "header is not a JSON object");

  const metadata: Record<string, string> = {};
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [name, entry] of Object.entries(parsed)) {
    if (name === "__metadata__") {
      if (!isJsonObject(entry)) throw fileProblem(label, "__metadata__ is not an object");
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== "string") throw fileProblem(label, `__metadata__.${k} is not a string`);
        metadata[k] = v;
      }
      continue;
    }
    if (tensors.length === maxTensors) throw fileProblem(label, `holds more than ${maxTensors} tensors`);
    tensors.push(parseTensorEntry(name, entry, dataSize, label));
  }

  const byOffset = [...tensors].sort(
    (a, b) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1],
  );
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1]!;
    const cur = byOffset[i]!;
    if (cur.dataOffsets[0] < prev.dataOffsets[1])
      throw fileProblem(label, `tensors ${prev.name} and ${cur.name} overlap`);
  }
  return { metadata, tensors };
}

function parseTensorEntry(name: string, entry: unknown, dataSize: number, label: string): SafetensorsTensorInfo {
  if (name.length === 0) throw fileProblem(label, "a tensor has an empty name");
  if (!isJsonObject(entry)) throw fileProblem(label, `tensor ${name} is not an object`);
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!isSafetensorsDtype(dtype)) {
    throw fileProblem(
      label,
      `tensor ${name} has unsupported dtype ${String(dtype)} (supported: ${Object.keys(safetensorsDtypeBytes).join(", ")})`,
    );
  }
  if (!Array.isArray(shape) || shape.length > 8 || !shape.every(isCount))
    throw fileProblem(label, `tensor ${name} has an invalid shape`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    throw fileProblem(label, `tensor ${name} has invalid data_offsets`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end || end > dataSize) {
    throw fileProblem(
      label,
      `tensor ${name} data_offsets [${begin}, ${end}] are outside the data section (${dataSize} bytes)`,
    );
  }
  const elements = (shape as number[]).reduce((a, b) => a * b, 1);
  const expected = elements * safetensorsDtypeBytes[dtype];
  if (!Number.isSafeInteger(expected) || expected !== end - begin) {
    throw fileProblem(
      label,
      `tensor ${name} has ${end - begin} bytes of data, but shape [${shape.join(", ")}] of ${dtype} needs ${expected}`,
    );
  }
  return { name, dtype, shape: shape as number[], dataOffsets: [begin, end] };
}

/** One tensor's values as float32 (F16 and BF16 are widened exactly). */
export async function readSafetensorsTensor(header: SafetensorsHeader, name: string): Promise<Float32Array> {
  const { label } = header;
  const info = header.tensors.find((t) => t.name === name);
  if (info === undefined) throw fileProblem(label, `has no tensor ${name}`);
  const [begin, end] = info.dataOffsets;
  const bytes = new Uint8Array(end - begin);
  const handle = await openModelFile(header.file, label);
  try {
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, header.dataStart + begin);
    if (bytesRead !== bytes.length) throw fileProblem(label, `file is truncated inside tensor ${name}`);
  } finally {
    await handle.close();
  }
  const view = new DataView(bytes.buffer);
  const count = bytes.length / safetensorsDtypeBytes[info.dtype];
  if (info.dtype === "F32") {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
    return out;
  }
  const bits = new Uint16Array(count);
  for (let i = 0; i < count; i++) bits[i] = view.getUint16(i * 2, true);
  return info.dtype === "F16" ? decodeF16(bits) : decodeBf16(bits);
}

/** Header and every tensor, for small files such as LoRA adapters. */
export async function readSafetensors(
  file: string,
): Promise<{ header: SafetensorsHeader; tensors: Map<string, Float32Array> }> {
  const header = await readSafetensorsHeader(file);
  const tensors = new Map<string, Float32Array>();
  for (const t of header.tensors) tensors.set(t.name, await readSafetensorsTensor(header, t.name));
  return { header, tensors };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
