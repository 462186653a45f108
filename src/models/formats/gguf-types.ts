/**
 * The vocabulary of the GGUF format (version 3): metadata value types, ggml tensor
 * types and their block layouts. Shared by the GGUF reader and writer.
 *
 * Shapes: GGUF lists a tensor's dimensions innermost first (`ne[0]` is the contiguous
 * one). Hearth's in-memory descriptions use numpy order instead (outermost first), so a
 * weight of numpy shape `[n_out, n_in]` is stored with GGUF dims `[n_in, n_out]`.
 */

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;
export const GGML_MAX_DIMS = 4;
/** ggml's name buffer size, terminator included: names are at most 63 bytes. */
export const GGML_MAX_NAME = 64;

/** Metadata value type codes, as stored in the file. */
export const ggufValueTypeCodes = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type GgufScalarType = Exclude<keyof typeof ggufValueTypeCodes, "array">;
export type GgufNumberType = Exclude<GgufScalarType, "bool" | "string" | "uint64" | "int64">;
export type GgufBigIntType = "uint64" | "int64";

export type GgufScalarValue =
  | { type: GgufNumberType; value: number }
  | { type: GgufBigIntType; value: bigint }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string };

export type GgufArrayValue =
  | { type: "array"; itemType: GgufNumberType; value: readonly number[] }
  | { type: "array"; itemType: GgufBigIntType; value: readonly bigint[] }
  | { type: "array"; itemType: "bool"; value: readonly boolean[] }
  | { type: "array"; itemType: "string"; value: readonly string[] };

/** One metadata value. Arrays of arrays exist in the format but are not supported here. */
export type GgufValue = GgufScalarValue | GgufArrayValue;

const typeByCode = new Map<number, keyof typeof ggufValueTypeCodes>(
  Object.entries(ggufValueTypeCodes).map(([name, code]) => [code, name as keyof typeof ggufValueTypeCodes]),
);

export function ggufValueTypeName(code: number): keyof typeof ggufValueTypeCodes | undefined {
  return typeByCode.get(code);
}

/** Bytes one scalar of a fixed-size type takes (strings: undefined, they are length-prefixed). */
export const fixedScalarSize: Record<Exclude<GgufScalarType, "string">, number> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float32: 4,
  bool: 1,
  uint64: 8,
  int64: 8,
  float64: 8,
};

/** llama.cpp's token types, the values of `tokenizer.ggml.token_type`. */
export const tokenType = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

/** Shorthand constructors for metadata values, so call sites read like a table. */
export const gguf = {
  u8: (value: number): GgufValue => ({ type: "uint8", value }),
  i32: (value: number): GgufValue => ({ type: "int32", value }),
  u32: (value: number): GgufValue => ({ type: "uint32", value }),
  u64: (value: bigint | number): GgufValue => ({ type: "uint64", value: BigInt(value) }),
  f32: (value: number): GgufValue => ({ type: "float32", value }),
  bool: (value: boolean): GgufValue => ({ type: "bool", value }),
  str: (value: string): GgufValue => ({ type: "string", value }),
  strings: (value: readonly string[]): GgufValue => ({ type: "array", itemType: "string", value }),
  i32s: (value: readonly number[]): GgufValue => ({ type: "array", itemType: "int32", value }),
  f32s: (value: readonly number[]): GgufValue => ({ type: "array", itemType: "float32", value }),
};

/**
 * ggml tensor types that may appear in a GGUF file: code, elements per block, bytes per block.
 * A tensor's innermost dimension must be a multiple of the block size.
 */
export const ggmlTypes = {
  F32: { code: 0, blockSize: 1, blockBytes: 4 },
  F16: { code: 1, blockSize: 1, blockBytes: 2 },
  Q4_0: { code: 2, blockSize: 32, blockBytes: 18 },
  Q4_1: { code: 3, blockSize: 32, blockBytes: 20 },
  Q5_0: { code: 6, blockSize: 32, blockBytes: 22 },
  Q5_1: { code: 7, blockSize: 32, blockBytes: 24 },
  Q8_0: { code: 8, blockSize: 32, blockBytes: 34 },
  Q8_1: { code: 9, blockSize: 32, blockBytes: 36 },
  Q2_K: { code: 10, blockSize: 256, blockBytes: 84 },
  Q3_K: { code: 11, blockSize: 256, blockBytes: 110 },
  Q4_K: { code: 12, blockSize: 256, blockBytes: 144 },
  Q5_K: { code: 13, blockSize: 256, blockBytes: 176 },
  Q6_K: { code: 14, blockSize: 256, blockBytes: 210 },
  Q8_K: { code: 15, blockSize: 256, blockBytes: 292 },
  IQ2_XXS: { code: 16, blockSize: 256, blockBytes: 66 },
  IQ2_XS: { code: 17, blockSize: 256, blockBytes: 74 },
  IQ3_XXS: { code: 18, blockSize: 256, blockBytes: 98 },
  IQ1_S: { code: 19, blockSize: 256, blockBytes: 50 },
  IQ4_NL: { code: 20, blockSize: 32, blockBytes: 18 },
  IQ3_S: { code: 21, blockSize: 256, blockBytes: 110 },
  IQ2_S: { code: 22, blockSize: 256, blockBytes: 82 },
  IQ4_XS: { code: 23, blockSize: 256, blockBytes: 136 },
  I8: { code: 24, blockSize: 1, blockBytes: 1 },
  I16: { code: 25, blockSize: 1, blockBytes: 2 },
  I32: { code: 26, blockSize: 1, blockBytes: 4 },
  I64: { code: 27, blockSize: 1, blockBytes: 8 },
  F64: { code: 28, blockSize: 1, blockBytes: 8 },
  IQ1_M: { code: 29, blockSize: 256, blockBytes: 56 },
  BF16: { code: 30, blockSize: 1, blockBytes: 2 },
  TQ1_0: { code: 34, blockSize: 256, blockBytes: 54 },
  TQ2_0: { code: 35, blockSize: 256, blockBytes: 66 },
  MXFP4: { code: 39, blockSize: 32, blockBytes: 17 },
} as const;

export type GgmlTypeName = keyof typeof ggmlTypes;

const ggmlTypeByCode = new Map<number, GgmlTypeName>(
  Object.entries(ggmlTypes).map(([name, t]) => [t.code, name as GgmlTypeName]),
);

export function ggmlTypeName(code: number): GgmlTypeName | undefined {
  return ggmlTypeByCode.get(code);
}

/**
 * Bytes a tensor of this type and numpy-ordered shape occupies, or a reason why the shape
 * does not fit the type (innermost dimension not a multiple of the block size).
 */
export function ggmlTensorBytes(type: GgmlTypeName, shape: readonly number[]): number | string {
  const { blockSize, blockBytes } = ggmlTypes[type];
  const inner = shape.length === 0 ? 1 : shape[shape.length - 1]!;
  if (inner % blockSize !== 0)
    return `innermost dimension ${inner} is not a multiple of ${type}'s block size ${blockSize}`;
  let elements = 1;
  for (const d of shape) elements *= d;
  return (elements / blockSize) * blockBytes;
}

export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}
