import { readFileSync } from "node:fs";

/**
 * The package's name and version (package.json): the server reports the version at
 * GET /v1/version, the CLI shows it and compares it with newer releases.
 */
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

export const PACKAGE_NAME: string = manifest.name;
export const HEARTH_VERSION: string = manifest.version;
