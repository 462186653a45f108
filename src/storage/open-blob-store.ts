import type { Config } from "../config.js";
import type { BlobStore } from "./blob-store.js";
import { FileBlobStore } from "./file-blob-store.js";
import { S3BlobStore } from "./s3-blob-store.js";

/** The BlobStore of the configured location (HEARTH_STORAGE_URL): one case per backend. */
export function openBlobStore(config: Pick<Config, "storage" | "s3">): BlobStore {
  const location = config.storage;
  switch (location.scheme) {
    case "file":
      return new FileBlobStore(location.dir);
    case "s3":
      return S3BlobStore.open({ bucket: location.bucket, prefix: location.prefix, ...config.s3 });
  }
}
