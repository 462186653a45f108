/**
 * IEEE half precision (F16) and bfloat16 (BF16) conversions, bit-exact and
 * round-to-nearest-even (Node 20 has no Float16Array).
 */

/** The largest finite F16 value; anything larger rounds to infinity. */
export const F16_MAX = 65504;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The F16 bit pattern nearest to a number (ties to even; overflow to infinity). */
export function f32ToF16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rem = mant & ((1 << shift) - 1);
    let m = mant >>> shift;
    if (rem > half || (rem === half && (m & 1) === 1)) m += 1;
    return sign | m;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h += 1;
  return sign | h;
}

export function f16BitsToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The BF16 bit pattern nearest to a number (ties to even; NaN stays NaN). */
export function f32ToBf16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return (x >>> 16) | 0x40;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

export function bf16BitsToF32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** Each value through `convert`, into a new array of the target type. */
function mapValues<T extends Uint16Array | Float32Array>(
  from: ArrayLike<number>,
  into: T,
  convert: (value: number) => number,
): T {
  for (let i = 0; i < from.length; i++) into[i] = convert(from[i]!);
  return into;
}

export const encodeF16 = (values: Float32Array) => mapValues(values, new Uint16Array(values.length), f32ToF16Bits);
export const decodeF16 = (bits: Uint16Array) => mapValues(bits, new Float32Array(bits.length), f16BitsToF32);
export const encodeBf16 = (values: Float32Array) => mapValues(values, new Uint16Array(values.length), f32ToBf16Bits);

export function decodeBf16(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const asU32 = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) asU32[i] = bits[i]! << 16;
  return out;
}
