import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";

/** The package.json inside an npm package tarball (`npm pack` output: gzip'd tar, files under `package/`). */

export interface PackageManifest {
  name?: unknown;
  version?: unknown;
  bin?: unknown;
}

const BLOCK = 512;

export async function readTarballManifest(file: string): Promise<PackageManifest> {
  let tar: Buffer;
  try {
    tar = gunzipSync(await readFile(file));
  } catch (e) {
    throw new Error(
      `${file} is not a gzip'd package tarball (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break;
    const name = field(header, 0, 100);
    const prefix = field(header, 345, 155);
    const size = parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = header[156];
    const path = prefix ? `${prefix}/${name}` : name;
    offset += BLOCK;
    // type "0" (or NUL in old tars) is a regular file; the manifest sits in the one top-level folder.
    if ((type === 0x30 || type === 0) && /^[^/]+\/package\.json$/.test(path)) {
      try {
        return JSON.parse(tar.subarray(offset, offset + size).toString("utf8")) as PackageManifest;
      } catch {
        throw new Error(`${file}: ${path} is not valid JSON`);
      }
    }
    offset += Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error(`${file} holds no package.json: not an npm package tarball`);
}

function field(header: Buffer, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? length : end).toString("utf8");
}
