import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

/** The suffix of a file still being written; listings skip it, and a restart removes it. */
export const PARTIAL_SUFFIX = ".partial";

/**
 * Streams `source` through `through` into a new temporary file beside `file`, then gives its
 * path to `commit`, which moves it into place. The temporary file exists before any byte flows,
 * so when anything fails it is removed before this rejects: no partial file outlives the call.
 */
export async function writeThroughTempFile<T>(
  file: string,
  source: AsyncIterable<Uint8Array>,
  through: Transform,
  commit: (temp: string) => Promise<T>,
): Promise<T> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomUUID()}${PARTIAL_SUFFIX}`;
  const handle = await fs.open(temp, "wx");
  try {
    await pipeline(source, through, handle.createWriteStream());
    return await commit(temp);
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.rm(temp, { force: true });
    throw err;
  }
}
