import { open } from "node:fs/promises";
import { encodeBf16, encodeF16 } from "./half-float.js";
import { safetensorsDtypeBytes, type SafetensorsDtype } from "./safetensors-format.js";

/**
 * Writes a safetensors file: tensors in the order given, the JSON header padded with
 * spaces to a multiple of 8 bytes (as the reference implementation does), so the same
 * input always gives the same bytes.
 */

export interface SafetensorsTensorInput {
  name: string;
  dtype: SafetensorsDtype;
  /** numpy order, outermost first. */
  shape: readonly number[];
  /** Row-major values; converted to `dtype` on write. */
  data: Float32Array;
}

export async function writeSafetensors(
  file: string,
  tensors: readonly SafetensorsTensorInput[],
  metadata: Readonly<Record<string, string>> = {},
): Promise<void> {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  const payloads: Uint8Array[] = [];
  let offset = 0;
  for (const t of tensors) {
    if (t.name === "__metadata__" || t.name.length === 0 || Object.hasOwn(header, t.name)) {
      throw new Error(`bad or duplicate tensor name ${JSON.stringify(t.name)}`);
    }
    const elements = t.shape.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length)
      throw new Error(`tensor ${t.name}: ${t.data.length} values for shape [${t.shape.join(", ")}]`);
    const bytes = encode(t.dtype, t.data);
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
    payloads.push(bytes);
    offset += bytes.length;
  }
  let json = Buffer.from(JSON.stringify(header), "utf8");
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded > json.length) json = Buffer.concat([json, Buffer.alloc(padded - json.length, 0x20)]);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));

  const handle = await open(file, "w");
  try {
    let position = 0;
    for (const chunk of [prefix, json, ...payloads]) {
      await handle.write(chunk, 0, chunk.length, position);
      position += chunk.length;
    }
  } finally {
    await handle.close();
  }
}

function encode(dtype: SafetensorsDtype, values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * safetensorsDtypeBytes[dtype]);
  const view = new DataView(out.buffer);
  if (dtype === "F32") {
    for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
    return out;
  }
  const bits = dtype === "F16" ? encodeF16(values) : encodeBf16(values);
  for (let i = 0; i < bits.length; i++) view.setUint16(i * 2, bits[i]!, true);
  return out;
}
