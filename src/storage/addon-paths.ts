import fs from "node:fs/promises";
import { createWriteStream } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { BlobStore } from "./blob-store.js";
import { storageKeys } from "./keys.js";

/**
 * Runs `use` with a model's uploaded files as the addon readers want them: file name → local
 * path. A store with local files gives its own; another (S3) has them copied to a scratch
 * directory first, removed once `use` has ended.
 */
export async function withAddonFiles<T>(
  storage: BlobStore,
  accountId: string,
  modelId: string,
  use: (files: Map<string, string>) => Promise<T>,
): Promise<T> {
  const prefix = storageKeys.modelFiles(accountId, modelId);
  const keys = await storage.list(prefix);
  const local = new Map(keys.map((key) => [key.slice(prefix.length), storage.localPath(key)]));
  if ([...local.values()].every((file) => file !== undefined)) return use(local as Map<string, string>);
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-addon-files-"));
  try {
    const files = new Map<string, string>();
    for (const key of keys) {
      const name = key.slice(prefix.length);
      const file = path.join(scratch, path.basename(name));
      await pipeline(await storage.get(key), createWriteStream(file, { flags: "wx" }));
      files.set(name, file);
    }
    return await use(files);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
