/**
 * The safetensors layout: an 8-byte little-endian header length N, N bytes of JSON
 * ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}),
 * then the data section; offsets are relative to the data section's start.
 * Hearth handles the float dtypes LoRA adapters use.
 */

export const safetensorsDtypeBytes = { F32: 4, F16: 2, BF16: 2 } as const;

export type SafetensorsDtype = keyof typeof safetensorsDtypeBytes;

export function isSafetensorsDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === "string" && Object.hasOwn(safetensorsDtypeBytes, value);
}

export interface SafetensorsTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  /** numpy order, outermost first. */
  shape: number[];
  /** [begin, end) relative to the data section. */
  dataOffsets: [number, number];
}

export const SAFETENSORS_MAX_HEADER_BYTES = 100 * 1024 * 1024;
