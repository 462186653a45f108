/**
 * Compiles the `hearth` CLI ahead of time, so that a command starts as plain JavaScript rather
 * than TypeScript compiled at every start:
 *
 *   npm run build      (npm ci runs it too, as `prepare`)
 *
 * esbuild bundles src/cli/main.ts and everything of src/ it imports into dist/cli/main.js; the
 * modules a command loads only when it runs (`import()`) become chunks beside it. Packages stay
 * outside the bundle (node_modules is there wherever the CLI runs). Then bin/compiled-cli.js
 * records the sources, by which the launcher knows whether the build is still current.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { COMPILED_CLI_DIR, recordBuild } from "../bin/compiled-cli.js";

const ROOT = path.resolve(import.meta.dirname, "..");

/** Builds dist/cli; returns the sources compiled into it, relative to the package root. */
export async function buildCli(): Promise<string[]> {
  // No record while the output is incomplete: an interrupted build is no build.
  await rm(COMPILED_CLI_DIR, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: "src/cli/main.ts" },
    outdir: COMPILED_CLI_DIR,
    chunkNames: "[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20.19",
    packages: "external",
    metafile: true,
    logLevel: "warning",
  });
  const sources = Object.keys(result.metafile.inputs).sort();
  recordBuild(sources);
  return sources;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const sources = await buildCli();
  const ms = Math.round(performance.now() - started);
  console.log(
    `compiled the hearth CLI from ${sources.length} sources into ${path.relative(ROOT, COMPILED_CLI_DIR)} (${ms} ms)`,
  );
}
