import fs from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../logger.js";
import { checkLlamaBaseModel, type BaseModelSummary } from "./base-model-check.js";

export interface BaseModelFile {
  /** The model ID under the built-in account: the file name without `.gguf`. */
  id: string;
  path: string;
  summary: BaseModelSummary;
}

const MODEL_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The base models an operator provides: every `<id>.gguf` directly in the model
 * directory that passes the base-model check (so llama.cpp never sees a file that
 * could abort the process). `only` restricts the set to the given IDs.
 */
export async function discoverBaseModels(
  dir: string,
  only: readonly string[] | undefined,
  log: Logger,
): Promise<BaseModelFile[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  const found: BaseModelFile[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isFile() || !entry.name.endsWith(".gguf")) continue;
    const id = entry.name.slice(0, -".gguf".length);
    if (only && !only.includes(id)) continue;
    if (!MODEL_ID.test(id)) {
      log.warn("skipping model file: its name is not a valid model ID (lowercase letters, digits, hyphens)", {
        file: entry.name,
      });
      continue;
    }
    const file = path.join(dir, entry.name);
    try {
      found.push({ id, path: file, summary: await checkLlamaBaseModel(file) });
    } catch (err) {
      log.warn("skipping model file", { file, reason: (err as Error).message });
    }
  }
  for (const id of only ?? []) {
    if (!found.some((m) => m.id === id)) log.warn("configured model not found", { model: id, dir });
  }
  return found;
}
