import { AppError } from "../errors.js";
import type { BlobStore } from "../storage/blob-store.js";
import type { ArtifactCache } from "./artifact-cache.js";

/**
 * The local file of an adapter's storage key, for llama.cpp (which reads files): the store's
 * own file where it has local files, else a copy in the worker's artifact cache. Fails with a
 * message an operator can act on: the usual cause is a worker that does not see the storage
 * directory the API wrote the adapter to.
 */
export async function adapterFile(store: BlobStore, key: string, cache: ArtifactCache): Promise<string> {
  let file: string | undefined;
  try {
    file = store.localPath(key);
  } catch (cause) {
    throw new AppError("internal", `The request names an invalid adapter storage key ${JSON.stringify(key)}.`, {
      cause,
    });
  }
  if (file === undefined) return cache.file(key);
  if ((await store.stat(key)) === undefined) {
    throw new AppError(
      "internal",
      `The adapter file ${key} is missing on this worker: is HEARTH_STORAGE_DIR shared by the API and the workers?`,
    );
  }
  return file;
}
