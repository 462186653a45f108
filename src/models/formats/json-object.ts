/** JSON inside model files (safetensors headers, adapter_config.json, hearth.json). */

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Strict UTF-8 (a bad byte fails rather than turning into U+FFFD), then JSON; `ok: false` on either failing. */
export function parseUtf8Json(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
  } catch {
    return { ok: false };
  }
}
