import { fileURLToPath } from "node:url";

/** Storage backends by URL scheme (src/storage/open-blob-store.ts opens each). */
export const STORAGE_SCHEMES = ["file", "s3"] as const;
/** Where blobs live: a directory, or an S3 bucket and key prefix (the endpoint and region come from AWS_* variables). */
export type StorageLocation = { scheme: "file"; dir: string } | { scheme: "s3"; bucket: string; prefix: string };

const storageBackends = `the storage backends are ${STORAGE_SCHEMES.map((s) => `${s}://`).join(", ")}`;

/** HEARTH_STORAGE_URL, parsed here once: a StorageLocation, or a problem the config reports. */
export function parseStorageUrl(text: string): StorageLocation | { problem: string } {
  if (!URL.canParse(text)) return { problem: `not a URL; ${storageBackends}` };
  const url = new URL(text);
  if (url.protocol === "s3:") return parseS3Url(url);
  if (url.protocol !== "file:") return { problem: storageBackends };
  // new URL reads file:relative and file:./x as file:///relative and file:///x: refuse, not guess.
  if (!/^file:\/\//i.test(text) || (url.host !== "" && url.host !== "localhost")) {
    return { problem: "a file URL names an absolute path on this machine: file:///abs/path" };
  }
  try {
    return { scheme: "file", dir: fileURLToPath(url) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/** s3://bucket/prefix: a bucket name as S3 allows it, and a key prefix of plain segments (or none). */
function parseS3Url(url: URL): StorageLocation | { problem: string } {
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    return {
      problem: "an S3 URL names its bucket first: s3://bucket/prefix (3-63 lower-case letters, digits, dots, hyphens)",
    };
  }
  if (url.username || url.password || url.port || url.search || url.hash) {
    return { problem: "an S3 URL has a bucket and a prefix only; credentials come from the AWS variables" };
  }
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  if (prefix !== "" && !prefix.split("/").every((s) => /^[A-Za-z0-9._-]+$/.test(s) && s !== "." && s !== "..")) {
    return { problem: "an S3 key prefix is made of plain path segments: s3://bucket/some/prefix" };
  }
  return { scheme: "s3", bucket, prefix };
}
