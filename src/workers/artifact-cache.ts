import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { AppError } from "../errors.js";
import { checkKey, type BlobStore } from "../storage/blob-store.js";
import { PARTIAL_SUFFIX, writeThroughTempFile } from "../storage/temp-file.js";

interface Entry {
  file: string;
  size: number;
  /** When it was last used, as a count of uses (a clock that never ties). */
  usedAt: number;
}

/**
 * Local copies of stored artifacts, for a worker whose storage has no local files (S3):
 * llama.cpp reads an adapter from a file. Artifacts are content-addressed (their key holds
 * their SHA-256), so a copy never goes stale; each is downloaded once (concurrent asks share
 * the download), checked against the SHA-256 the store recorded, and kept under `dir` by its
 * key, at most `maxBytes` in all: the least recently used copies go first. A loaded adapter
 * no longer needs its file, so evicting one in use costs only a later download.
 */
export class ArtifactCache {
  private readonly entries = new Map<string, Entry>();
  private readonly downloads = new Map<string, Promise<string>>();
  private scanned: Promise<void> | undefined;
  private clock = 0;

  constructor(
    private readonly store: BlobStore,
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.size;
    return total;
  }

  /** The local file of `key`, downloaded if this worker has no copy. */
  async file(key: string): Promise<string> {
    checkKey(key);
    this.scanned ??= this.scan();
    await this.scanned;
    const entry = this.entries.get(key);
    if (entry) {
      entry.usedAt = ++this.clock;
      return entry.file;
    }
    let download = this.downloads.get(key);
    if (!download) {
      download = this.download(key).finally(() => this.downloads.delete(key));
      this.downloads.set(key, download);
    }
    return download;
  }

  private async download(key: string): Promise<string> {
    const info = await this.store.stat(key);
    if (!info) {
      throw new AppError("internal", `The adapter file ${key} is missing from storage: was it deleted meanwhile?`);
    }
    const file = path.join(this.dir, ...key.split("/"));
    const hash = createHash("sha256");
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await writeThroughTempFile(file, await this.store.get(key), meter, async (temp) => {
      const sha256 = hash.digest("hex");
      if (info.sha256 && info.sha256 !== sha256) {
        throw new AppError("internal", `The download of ${key} has SHA-256 ${sha256}, not the stored ${info.sha256}.`);
      }
      await fs.rename(temp, file);
    });
    this.entries.set(key, { file, size: info.size, usedAt: ++this.clock });
    await this.trim(key);
    return file;
  }

  /** Removes the least recently used copies (never `keep`, just fetched) until within the bound. */
  private async trim(keep: string) {
    const byAge = [...this.entries].sort(([, a], [, b]) => a.usedAt - b.usedAt);
    let total = this.bytes;
    for (const [key, entry] of byAge) {
      if (total <= this.maxBytes) return;
      if (key === keep) continue;
      this.entries.delete(key);
      total -= entry.size;
      await fs.rm(entry.file, { force: true });
    }
  }

  /** Copies kept from an earlier run of the worker count, oldest first by their time on disk; partial ones go. */
  private async scan(): Promise<void> {
    const found = await fs.readdir(this.dir, { recursive: true, withFileTypes: true }).catch(() => []);
    const kept: { key: string; file: string; size: number; mtime: number }[] = [];
    for (const item of found) {
      if (!item.isFile()) continue;
      const file = path.join(item.parentPath, item.name);
      if (item.name.endsWith(PARTIAL_SUFFIX)) {
        await fs.rm(file, { force: true });
        continue;
      }
      const stat = await fs.stat(file);
      kept.push({
        key: path.relative(this.dir, file).split(path.sep).join("/"),
        file,
        size: stat.size,
        mtime: stat.mtimeMs,
      });
    }
    for (const { key, file, size } of kept.sort((a, b) => a.mtime - b.mtime)) {
      this.entries.set(key, { file, size, usedAt: ++this.clock });
    }
  }
}
