import { isJsonObject, parseUtf8Json } from "../formats/json-object.js";
import { AppError } from "../../errors.js";
import { fileProblem, openModelFile } from "../formats/model-file-error.js";

/**
 * The files an addon (a user's LoRA adapter) may consist of, the check on an uploaded
 * file's name, and the reading of its small JSON files.
 */

export const ADDON_FILE_NAMES = [
  "adapter_config.json",
  "adapter_model.safetensors",
  "adapter.gguf",
  "hearth.json",
] as const;

export type AddonFileName = (typeof ADDON_FILE_NAMES)[number];

export const PEFT_CONFIG = "adapter_config.json";
export const PEFT_WEIGHTS = "adapter_model.safetensors";
export const GGUF_ADAPTER = "adapter.gguf";
export const HEARTH_JSON = "hearth.json";

/** The largest adapter_config.json or hearth.json read. */
export const ADDON_JSON_MAX_BYTES = 1024 * 1024;

const MAX_NAME_BYTES = 255;
/** Python pickle formats: loading one can run arbitrary code. */
const PICKLE_SUFFIXES = [".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt"];

function badName(message: string): AppError {
  return new AppError("invalid_request", message, { param: "file_name" });
}

/** A PyTorch pickle (adapter_model.bin and the like), refused because loading one can run code. */
export function isPickleFileName(name: string): boolean {
  return PICKLE_SUFFIXES.some((suffix) => name.toLowerCase().endsWith(suffix));
}

export function isAddonFileName(name: string): name is AddonFileName {
  return (ADDON_FILE_NAMES as readonly string[]).includes(name);
}

/** Throws AppError("invalid_request", …, {param: "file_name"}) unless `name` is one of ADDON_FILE_NAMES. */
export function checkAddonFileName(name: string): void {
  if (name.length === 0) throw badName("file_name is empty");
  if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES)
    throw badName(`file_name is longer than ${MAX_NAME_BYTES} bytes`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  if (/[/\\]/.test(name) || name.startsWith(".") || /[\u0000-\u001f\u007f]/.test(name)) {
    const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
    throw badName(
      `${shown}: a file name must be a plain name: no folders ("/", "\\"), no leading "." and no control characters`,
    );
  }
  if (isPickleFileName(name)) {
    throw badName(
      `${name}: PyTorch pickle files are not accepted (loading one can run code). ` +
        `Save the adapter with save_pretrained(..., safe_serialization=True) and upload adapter_model.safetensors with adapter_config.json`,
    );
  }
  if (!isAddonFileName(name)) throw badName(`${name}: not an addon file (accepted: ${ADDON_FILE_NAMES.join(", ")})`);
}

/** Reads one of the addon's JSON files: at most ADDON_JSON_MAX_BYTES of UTF-8 holding a JSON object. */
export async function readAddonJson(file: string, label: AddonFileName): Promise<Record<string, unknown>> {
  const handle = await openModelFile(file, label);
  let bytes: Uint8Array;
  try {
    const { size } = await handle.stat();
    if (size > ADDON_JSON_MAX_BYTES)
      throw fileProblem(label, `is ${size} bytes; the limit is ${ADDON_JSON_MAX_BYTES} bytes`);
    bytes = new Uint8Array(size);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    if (bytesRead !== size) throw fileProblem(label, "file changed while it was read");
  } finally {
    await handle.close();
  }
  const decoded = parseUtf8Json(bytes);
  if (!decoded.ok) throw fileProblem(label, "is not valid UTF-8 JSON");
  if (!isJsonObject(decoded.value)) throw fileProblem(label, "must hold a JSON object");
  return decoded.value;
}

export { isJsonObject };

/** The local path of one of the addon's files, or an error saying it is missing. */
export function requireAddonFile(files: ReadonlyMap<string, string>, name: AddonFileName): string {
  const file = files.get(name);
  if (file === undefined) throw fileProblem(name, "missing");
  return file;
}
