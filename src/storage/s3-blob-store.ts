import { randomUUID } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { AppError } from "../errors.js";
import { checkKey, commitGuarded, type BlobInfo, type BlobStore, type PutOptions } from "./blob-store.js";
import { putMeter } from "./put-meter.js";

/** Where uploads are written before they take their key (never listed). */
const PARTIAL = ".partial";
/** Multipart part size, and parts in flight at once: what an upload holds in memory at most. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
/** The largest object CopyObject takes in one request. */
const MAX_COPY_BYTES = 5 * 1024 ** 3;

export interface S3Settings {
  bucket: string;
  /** Key prefix inside the bucket ("" for none). */
  prefix: string;
  /** An S3-compatible endpoint other than AWS's (addressed path-style). */
  endpoint: string | undefined;
  region: string;
}

/**
 * A BlobStore on an S3-compatible object store (AWS S3, MinIO, Ceph, R2…), for API and worker
 * processes on several hosts. Credentials come from the AWS SDK's usual chain.
 *
 * - put streams the body as a multipart upload (8 MiB parts, two in flight: memory stays
 *   bounded whatever the size), hashing and counting it on the way, to a temporary key; only a
 *   complete upload with the right size and SHA-256 is copied to its key (with the SHA-256 in
 *   its metadata) and the temporary object removed, so a failed put leaves the old content.
 * - localPath is undefined: workers download artifacts to their cache (artifact-cache.ts).
 * - Checksums: the SHA-256 Hearth computes is kept and checked; the SDK's own request
 *   checksums are sent only where S3 requires them, as not every S3-compatible server
 *   understands the newer trailing ones.
 */
export class S3BlobStore implements BlobStore {
  private constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  static open(settings: S3Settings): S3BlobStore {
    const client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
    return new S3BlobStore(client, settings.bucket, settings.prefix);
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    const target = this.objectKey(key);
    const temp = this.objectKey(`${PARTIAL}/${randomUUID()}`, true);
    const meter = putMeter(key, options);
    const stream = new PassThrough({ highWaterMark: PART_BYTES });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: temp, Body: stream },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
    });
    try {
      await Promise.all([pipeline(Readable.from(body), meter.stream, stream), upload.done()]);
      const { size, sha256 } = meter.finish();
      if (size > MAX_COPY_BYTES) {
        throw new AppError("payload_too_large", `${key} is larger than the 5 GiB an S3 copy takes at once.`);
      }
      await commitGuarded(options, size, async () => {
        await this.client.send(
          new CopyObjectCommand({
            Bucket: this.bucket,
            Key: target,
            CopySource: `${this.bucket}/${encodeURIComponent(temp).replace(/%2F/g, "/")}`,
            Metadata: { sha256 },
            MetadataDirective: "REPLACE",
          }),
        );
      });
      return { key, size, sha256 };
    } catch (error) {
      // The body may still be flowing into the upload: stop both.
      stream.destroy();
      await upload.abort().catch(() => {});
      throw storageError(error, key);
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })).catch(() => {});
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return answer.Body as Readable;
    } catch (error) {
      throw storageError(error, key);
    }
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      const sha256 = head.Metadata?.sha256;
      return { key, size: head.ContentLength ?? 0, ...(sha256 ? { sha256 } : {}) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw storageError(error, key);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const base = this.prefix === "" ? "" : `${this.prefix}/`;
    const from = prefix === "" ? base : this.objectKey(prefix, true);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: from, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(base.length);
        if (key && !key.startsWith(`${PARTIAL}/`)) keys.push(key);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(keyOrPrefix: string): Promise<void> {
    if (!keyOrPrefix.endsWith("/")) {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(keyOrPrefix) }));
      return;
    }
    checkKey(keyOrPrefix, { prefix: true });
    const keys = await this.list(keyOrPrefix);
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000).map((k) => ({ Key: this.objectKey(k) }));
      await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch, Quiet: true } }),
      );
    }
  }

  localPath(): undefined {
    return undefined;
  }

  /** The object key of a store key (checked), under the prefix. */
  private objectKey(key: string, internalOrPrefix = false): string {
    if (!internalOrPrefix || !key.startsWith(`${PARTIAL}/`)) checkKey(key, { prefix: internalOrPrefix });
    return this.prefix === "" ? key : `${this.prefix}/${key}`;
  }
}

function isMissing(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === "NotFound" || error.name === "NoSuchKey" || error.$metadata.httpStatusCode === 404)
  );
}

/**
 * Hearth's errors pass through; a missing key is not_found; the store unreachable or failing is
 * unavailable, the store's own words (its endpoint, bucket, reasons) going to the log only.
 */
function storageError(error: unknown, key: string): Error {
  if (error instanceof AppError) return error;
  if (isMissing(error)) return new AppError("not_found", `No stored file ${key}.`);
  return new AppError("unavailable", "The file storage is unavailable; please retry.", {
    cause: error,
    detail: `S3 request for ${key} failed: ${(error as Error).message}`,
  });
}
