import type { Readable } from "node:stream";
import { AppError } from "../errors.js";

/**
 * Where Hearth keeps files: uploaded adapter files and converted artifacts.
 * Keys are relative, slash-separated paths; writes are all-or-nothing (a failed or
 * interrupted upload leaves nothing behind, and never a half-written file under its key).
 */
export interface BlobStore {
  /** Streams `body` under `key`, replacing what was there only once the write is complete. */
  put(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<BlobInfo>;
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<BlobInfo | undefined>;
  /** Keys under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
  /** Removes a key, or every key under a prefix ending in "/"; missing keys are fine. */
  delete(keyOrPrefix: string): Promise<void>;
  /** A local file path for readers that need one (llama.cpp), when the backend has files. */
  localPath(key: string): string | undefined;
}

export interface PutOptions {
  /** Refuse (413) a body longer than this. */
  maxBytes?: number;
  /** Refuse (400) a body whose SHA-256 (hex) differs. */
  expectedSha256?: string;
  /**
   * Runs around the moment the content takes its key, once the whole body is in and checked:
   * it gets the size and must call `commit` (which makes the content visible under the key),
   * or throw, and then nothing is stored. What the caller checks here holds until the content
   * is in place: a lock it takes around `commit` covers the moment the store changes.
   */
  guardCommit?: (size: number, commit: () => Promise<void>) => Promise<void>;
}

/** The backends' last step: `commit`, inside the caller's guard if it has one. */
export function commitGuarded(options: PutOptions, size: number, commit: () => Promise<void>): Promise<void> {
  return options.guardCommit ? options.guardCommit(size, commit) : commit();
}

export interface BlobInfo {
  key: string;
  size: number;
  sha256?: string;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Checks a key: relative, no empty, "." or ".." segments, plain characters only. */
export function checkKey(key: string, { prefix = false } = {}): string {
  const body = prefix && key.endsWith("/") ? key.slice(0, -1) : key;
  const segments = body.split("/");
  const ok =
    body.length > 0 && body.length <= 1024 && segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..");
  if (!ok) throw new AppError("invalid_request", `Invalid storage key: ${JSON.stringify(key)}.`);
  return key;
}
