import { optionalString, parsedBy, int } from "./schemas.js";
import type { VariableSpec } from "./spec.js";
import { parseStorageUrl } from "./storage-url.js";

/** Where uploaded adapters and converted artifacts live: a shared directory or an S3 bucket. */
export const storage = {
  HEARTH_STORAGE_DIR: {
    schema: optionalString,
    description:
      "Directory of uploaded files and converted adapters, shared by API and workers. Unset: <HEARTH_DATA_DIR>/storage.",
  },
  HEARTH_STORAGE_URL: {
    schema: optionalString.pipe(parsedBy(parseStorageUrl).optional()),
    description: "The storage backend: file:///abs/path or s3://bucket/prefix. Set, it wins over HEARTH_STORAGE_DIR.",
  },
  AWS_ENDPOINT_URL_S3: {
    schema: optionalString,
    description:
      "With s3:// storage: the endpoint of a store other than AWS (MinIO, Ceph, R2…). Unset: AWS_ENDPOINT_URL.",
  },
  AWS_ENDPOINT_URL: {
    schema: optionalString,
    description: "As AWS_ENDPOINT_URL_S3, for every AWS service (the S3 one wins).",
  },
  AWS_REGION: {
    schema: optionalString,
    description: "With s3:// storage: the bucket's region. Unset: us-east-1.",
  },
  HEARTH_ARTIFACT_CACHE_MB: {
    schema: int(16, 1_048_576),
    default: "4096",
    description: "With S3 storage: the most a worker keeps of downloaded adapter artifacts on its disk.",
  },
} satisfies Record<string, VariableSpec>;
