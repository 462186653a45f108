import { AppError } from "../errors.js";
import type { BlobStore } from "./blob-store.js";
import { storageKeys } from "./keys.js";

/**
 * A model's uploaded files as the addon readers want them: file name → local path.
 * Needs a BlobStore with local files (the file system one); another backend would
 * first copy them to a scratch directory.
 */
export async function addonLocalPaths(
  storage: BlobStore,
  accountId: string,
  modelId: string,
): Promise<Map<string, string>> {
  const prefix = storageKeys.modelFiles(accountId, modelId);
  const files = new Map<string, string>();
  for (const key of await storage.list(prefix)) {
    const local = storage.localPath(key);
    if (!local) throw new AppError("internal", "This storage backend has no local files to read adapters from.");
    files.set(key.slice(prefix.length), local);
  }
  return files;
}
