import { f16BitsToF32, f32ToF16Bits } from "./half-float.js";

/**
 * ggml's Q8_0 quantization: blocks of 32 values, each block an F16 scale `d` followed
 * by 32 signed bytes `q`, value ≈ d·q, with d = max|x| / 127 (as ggml's reference
 * quantizer computes it).
 */

export const Q8_0_BLOCK = 32;
export const Q8_0_BLOCK_BYTES = 34;

export function quantizeQ8_0(values: Float32Array): Uint8Array {
  if (values.length % Q8_0_BLOCK !== 0)
    throw new Error(`Q8_0 needs a multiple of ${Q8_0_BLOCK} values, got ${values.length}`);
  const blocks = values.length / Q8_0_BLOCK;
  const out = new Uint8Array(blocks * Q8_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * Q8_0_BLOCK;
    let amax = 0;
    for (let j = 0; j < Q8_0_BLOCK; j++) amax = Math.max(amax, Math.abs(values[base + j]!));
    const d = Math.fround(amax / 127);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    const at = b * Q8_0_BLOCK_BYTES;
    view.setUint16(at, f32ToF16Bits(d), true);
    for (let j = 0; j < Q8_0_BLOCK; j++) {
      // C's roundf: halves away from zero.
      const x = Math.fround(values[base + j]! * id);
      view.setInt8(at + 2 + j, Math.sign(x) * Math.round(Math.abs(x)));
    }
  }
  return out;
}

export function dequantizeQ8_0(bytes: Uint8Array): Float32Array {
  if (bytes.length % Q8_0_BLOCK_BYTES !== 0)
    throw new Error(`Q8_0 data must be a multiple of ${Q8_0_BLOCK_BYTES} bytes`);
  const blocks = bytes.length / Q8_0_BLOCK_BYTES;
  const out = new Float32Array(blocks * Q8_0_BLOCK);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    const at = b * Q8_0_BLOCK_BYTES;
    const d = f16BitsToF32(view.getUint16(at, true));
    for (let j = 0; j < Q8_0_BLOCK; j++) out[b * Q8_0_BLOCK + j] = d * view.getInt8(at + 2 + j);
  }
  return out;
}
