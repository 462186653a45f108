import { createHash } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The CLI compiled ahead of time (scripts/build-cli.ts bundles src/cli/main.ts into dist/cli)
 * and the record of what it was compiled from: each source file's size, modification time and
 * sha256. The launcher runs the compiled CLI only while every source still matches; a changed
 * modification time alone (a copy, an npm install) is settled by the file's hash.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export const COMPILED_CLI_DIR = path.join(ROOT, "dist", "cli");
export const COMPILED_CLI_ENTRY = path.join(COMPILED_CLI_DIR, "main.js");
const RECORD = path.join(COMPILED_CLI_DIR, "sources.json");

/** @param {string} file */
function sha256(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/**
 * Writes the record of a build, once its output is complete.
 * @param {string[]} sources the compiled files, relative to the package root
 */
export function recordBuild(sources) {
  const files = sources.map((file) => {
    const absolute = path.join(ROOT, file);
    const { size, mtimeMs } = statSync(absolute);
    return { file, size, mtimeMs, sha256: sha256(absolute) };
  });
  writeFileSync(RECORD, `${JSON.stringify({ files }, null, 1)}\n`);
}

/**
 * Why the compiled CLI must not run (no build, or the first source that changed since), or
 * null when it is current.
 * @returns {string | null}
 */
export function outdatedBecause() {
  /** @type {{ files: { file: string; size: number; mtimeMs: number; sha256: string }[] }} */
  let record;
  try {
    record = JSON.parse(readFileSync(RECORD, "utf8"));
  } catch {
    return "the CLI is not compiled";
  }
  for (const source of record.files) {
    const absolute = path.join(ROOT, source.file);
    const stat = statSync(absolute, { throwIfNoEntry: false });
    if (!stat) return `${source.file} is gone since the CLI was compiled`;
    if (stat.size === source.size && stat.mtimeMs === source.mtimeMs) continue;
    if (stat.size !== source.size || sha256(absolute) !== source.sha256)
      return `${source.file} changed since the CLI was compiled`;
  }
  return null;
}
