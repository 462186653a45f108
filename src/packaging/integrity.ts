import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";

/**
 * Subresource-integrity strings as npm writes them (`sha512-<base64>`): what `/v1/version`
 * announces for the server's CLI tarball and what `hearth upgrade` checks before installing.
 */

export const sha512Hash = (): Hash => createHash("sha512");

export const integrityOf = (hash: Hash): string => `sha512-${hash.digest("base64")}`;

/** A file's integrity and size, read as a stream. */
export async function fileIntegrity(file: string): Promise<{ integrity: string; size: number }> {
  const hash = sha512Hash();
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { integrity: integrityOf(hash), size };
}

/** npm's integrity format, sha512 only (what npm pack writes). */
export const INTEGRITY_PATTERN = /^sha512-[A-Za-z0-9+/]{86}==$/;
