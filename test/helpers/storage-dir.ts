import type { Config } from "../../src/config.js";

/** The storage directory of a Hearth on local files (the tests that read its files directly). */
export function fileStorageDir(config: Config): string {
  if (config.storage.scheme !== "file")
    throw new Error(`this test reads local storage files, not ${config.storage.scheme}://`);
  return config.storage.dir;
}
