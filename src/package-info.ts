import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's root, name and version (package.json): the server reports the version at
 * GET /v1/version, the CLI shows it and compares it with newer releases. This module runs from
 * src/ and, compiled into the CLI, from dist/cli/: the root is the nearest folder above it that
 * holds a package.json.
 */
function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json above ${here}`);
  }
}

export const PACKAGE_ROOT: string = packageRoot();

const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
};

export const PACKAGE_NAME: string = manifest.name;
export const HEARTH_VERSION: string = manifest.version;
