import { readGgufHeader, type GgufHeader } from "../../src/models/formats/gguf-reader.js";

/**
 * The KV cache as llama.cpp allocates it for a model, from the model file's metadata: every
 * cell holds, in each layer, a key and a value per KV head (F16, node-llama-cpp's default).
 */

/** Bytes one token's cells take: layers × KV heads × (key + value width) × 2 bytes. */
export function kvBytesPerToken(header: GgufHeader, label: string): number {
  const arch = String(metadataValue(header, "general.architecture", label));
  const meta = (key: string) => Number(metadataValue(header, `${arch}.${key}`, label));
  const has = (key: string) => header.metadata.has(`${arch}.${key}`);
  // Most architectures leave the head widths out: then they are the embedding split over the heads.
  const headWidth = meta("embedding_length") / meta("attention.head_count");
  const keyWidth = has("attention.key_length") ? meta("attention.key_length") : headWidth;
  const valueWidth = has("attention.value_length") ? meta("attention.value_length") : headWidth;
  return meta("block_count") * meta("attention.head_count_kv") * (keyWidth + valueWidth) * 2;
}

/** The KV cache of one context of `sequences` × `contextSize` tokens (capped at the model's context length). */
export async function kvCacheBytes(
  modelFile: string,
  settings: { sequences: number; contextSize: number },
): Promise<number> {
  const header = await readGgufHeader(modelFile);
  const arch = String(metadataValue(header, "general.architecture", modelFile));
  const perSequence = Math.min(
    settings.contextSize,
    Number(metadataValue(header, `${arch}.context_length`, modelFile)),
  );
  // node-llama-cpp allocates contextSize × sequences cells, rounded up to a multiple of 256.
  const cells = Math.ceil((perSequence * settings.sequences) / 256) * 256;
  return cells * kvBytesPerToken(header, modelFile);
}

function metadataValue(header: GgufHeader, key: string, label: string) {
  const entry = header.metadata.get(key);
  if (entry === undefined || entry.type === "array") throw new Error(`${label} has no ${key}`);
  return entry.value;
}
