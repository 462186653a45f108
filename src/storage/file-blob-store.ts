import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { AppError } from "../errors.js";
import { checkKey, commitGuarded, type BlobInfo, type BlobStore, type PutOptions } from "./blob-store.js";
import { putMeter } from "./put-meter.js";
import { PARTIAL_SUFFIX, writeThroughTempFile } from "./temp-file.js";

/** A BlobStore on the local file system (a directory shared by API and workers). */
export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async put(key: string, body: AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    const file = this.file(key);
    const meter = putMeter(key, options);
    return writeThroughTempFile(file, body, meter.stream, async (temp) => {
      const { size, sha256 } = meter.finish();
      await commitGuarded(options, size, () => fs.rename(temp, file));
      return { key, size, sha256 };
    });
  }

  async get(key: string): Promise<Readable> {
    const file = this.file(key);
    await fs.access(file).catch(() => {
      throw new AppError("not_found", `No stored file ${key}.`);
    });
    return createReadStream(file);
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    const st = await fs.stat(this.file(key)).catch(() => undefined);
    return st?.isFile() ? { key, size: st.size } : undefined;
  }

  async list(prefix: string): Promise<string[]> {
    const base = prefix === "" ? this.root : this.file(prefix.replace(/\/$/, ""), true);
    const entries = await fs.readdir(base, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => e.isFile() && !e.name.endsWith(PARTIAL_SUFFIX))
      .map((e) => path.relative(this.root, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
      .sort();
  }

  async delete(keyOrPrefix: string): Promise<void> {
    const isPrefix = keyOrPrefix.endsWith("/");
    await fs.rm(this.file(isPrefix ? keyOrPrefix.slice(0, -1) : keyOrPrefix, isPrefix), {
      recursive: isPrefix,
      force: true,
    });
  }

  localPath(key: string): string {
    return this.file(key);
  }

  private file(key: string, prefix = false): string {
    return path.join(this.root, ...checkKey(key, { prefix }).split("/"));
  }
}
