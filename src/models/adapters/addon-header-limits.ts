import type { GgufReadLimits } from "../formats/gguf-reader.js";

/**
 * How much of an uploaded adapter's header Hearth reads while validating it. An adapter's
 * header is small (a rank-64 LoRA of an 80-layer model has ~1,100 tensors and a few KB of
 * metadata); these bounds are far above that and far below what would strain the API.
 * Each is reported with the file and the field when passed (docs/addons.md#limits).
 */
export const ADDON_MAX_TENSORS = 16_384;

export const addonGgufLimits: GgufReadLimits = {
  maxHeaderBytes: 16 * 1024 * 1024,
  maxMetadataEntries: 1_024,
  maxTensors: ADDON_MAX_TENSORS,
  maxStringBytes: 1024 * 1024,
  maxArrayLength: 65_536,
};

/** adapter_model.safetensors: its JSON header, parsed whole, so bounded in bytes. */
export const ADDON_SAFETENSORS_MAX_HEADER_BYTES = 16 * 1024 * 1024;
