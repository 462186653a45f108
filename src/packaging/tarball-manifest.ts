import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";

/**
 * The package.json inside an npm package tarball (`npm pack` output: gzip'd tar, files under
 * `package/`), read as a stream: the tar is walked header by header as it is inflated and
 * reading stops at the manifest, so a large or hostile tarball is never held in memory.
 */

export interface PackageManifest {
  name?: unknown;
  version?: unknown;
  bin?: unknown;
  scripts?: unknown;
}

const BLOCK = 512;
/** A package.json larger than this is not one npm wrote. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

export async function readTarballManifest(file: string): Promise<PackageManifest> {
  const gunzip = createReadStream(file).pipe(createGunzip());
  let buffer = Buffer.alloc(0);
  /** Bytes of the current entry still to skip before the next header. */
  let skip = 0;
  let manifest: { path: string; size: number } | undefined;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (manifest) {
          if (buffer.length < manifest.size) break;
          try {
            return JSON.parse(buffer.subarray(0, manifest.size).toString("utf8")) as PackageManifest;
          } catch {
            throw new Error(`${file}: ${manifest.path} is not valid JSON`);
          }
        }
        if (skip > 0) {
          const dropped = Math.min(skip, buffer.length);
          buffer = buffer.subarray(dropped);
          skip -= dropped;
          if (skip > 0) break;
        }
        if (buffer.length < BLOCK) break;
        const header = buffer.subarray(0, BLOCK);
        if (header.every((b) => b === 0)) throw new Error(`${file} holds no package.json: not an npm package tarball`);
        const name = field(header, 0, 100);
        const prefix = field(header, 345, 155);
        const size = parseInt(field(header, 124, 12).trim() || "0", 8);
        const type = header[156];
        const path = prefix ? `${prefix}/${name}` : name;
        buffer = buffer.subarray(BLOCK);
        if (!Number.isSafeInteger(size) || size < 0) throw new Error(`${file}: a tar header has a bad size`);
        // type "0" (or NUL in old tars) is a regular file; the manifest sits in the one top-level folder.
        if ((type === 0x30 || type === 0) && /^[^/]+\/package\.json$/.test(path)) {
          if (size > MAX_MANIFEST_BYTES) throw new Error(`${file}: ${path} is ${size} bytes, too large`);
          manifest = { path, size };
        } else {
          skip = Math.ceil(size / BLOCK) * BLOCK;
        }
      }
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code?.startsWith("Z_")) {
      throw new Error(`${file} is not a gzip'd package tarball (${(e as NodeJS.ErrnoException).code})`);
    }
    throw e;
  } finally {
    gunzip.destroy();
  }
  throw new Error(`${file} holds no package.json: not an npm package tarball`);
}

/**
 * The lifecycle scripts npm runs when it installs a package from a tarball. Not `prepare`: npm
 * runs that only in a folder or a git checkout it installs from (to build the package there),
 * never for a tarball; Hearth's own package has one, which compiles the CLI after `npm ci`.
 */
export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"] as const;

export function installScriptsOf(manifest: PackageManifest): string[] {
  const scripts = manifest.scripts;
  if (scripts === null || typeof scripts !== "object") return [];
  return INSTALL_SCRIPTS.filter((name) => Object.hasOwn(scripts, name));
}

function field(header: Buffer, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? length : end).toString("utf8");
}
