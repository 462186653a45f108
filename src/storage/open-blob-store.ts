import type { StorageLocation } from "../config.js";
import type { BlobStore } from "./blob-store.js";
import { FileBlobStore } from "./file-blob-store.js";

/** The BlobStore of the configured location (HEARTH_STORAGE_URL): one case per backend. */
export function openBlobStore(location: StorageLocation): BlobStore {
  switch (location.scheme) {
    case "file":
      return new FileBlobStore(location.dir);
  }
}
