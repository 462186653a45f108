import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { AppError } from "../../src/errors.js";
import {
  checkKey,
  commitGuarded,
  type BlobInfo,
  type BlobStore,
  type PutOptions,
} from "../../src/storage/blob-store.js";

/** An in-memory BlobStore, for fast unit tests of code that uses the port. */
export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, Buffer>();

  async put(key: string, body: AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    checkKey(key);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (options.maxBytes !== undefined && size > options.maxBytes) {
        throw new AppError("payload_too_large", `${key} is larger than ${options.maxBytes} bytes.`);
      }
      chunks.push(Buffer.from(chunk));
    }
    const data = Buffer.concat(chunks);
    const sha256 = createHash("sha256").update(data).digest("hex");
    if (options.expectedSha256 && options.expectedSha256.toLowerCase() !== sha256) {
      throw new AppError(
        "invalid_request",
        `${key}: the content's SHA-256 is ${sha256}, not ${options.expectedSha256}.`,
      );
    }
    await commitGuarded(options, size, async () => {
      this.blobs.set(key, data);
    });
    return { key, size, sha256 };
  }

  async get(key: string): Promise<Readable> {
    const data = this.blobs.get(checkKey(key));
    if (!data) throw new AppError("not_found", `No stored file ${key}.`);
    return Readable.from([data]);
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    const data = this.blobs.get(checkKey(key));
    return data ? { key, size: data.length } : undefined;
  }

  async list(prefix: string): Promise<string[]> {
    if (prefix !== "") checkKey(prefix, { prefix: true });
    return [...this.blobs.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  async delete(keyOrPrefix: string): Promise<void> {
    checkKey(keyOrPrefix, { prefix: true });
    if (!keyOrPrefix.endsWith("/")) this.blobs.delete(keyOrPrefix);
    else for (const k of [...this.blobs.keys()]) if (k.startsWith(keyOrPrefix)) this.blobs.delete(k);
  }

  localPath(): undefined {
    return undefined;
  }
}
