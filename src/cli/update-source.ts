import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import semver from "semver";
import { PACKAGE_NAME } from "../package-info.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";
import { readTarballManifest, type PackageManifest } from "./tarball-manifest.js";

/**
 * Where `hearth upgrade` looks for a newer CLI: the npm registry (`npm view`), or a package
 * tarball (`npm pack` output) at a URL or a local path, for machines without the registry.
 */

export const NPM_SOURCE = "npm";

export interface Release {
  version: string;
  /** What `npm install -g` is given: name@version, or the tarball's local path. */
  installSpec: string;
  /** How the source is shown to people. */
  label: string;
}

const LAUNCHER = "bin/hearth.js";

export async function findRelease(source: string): Promise<Release> {
  if (source === NPM_SOURCE) {
    const manifest = JSON.parse(
      await runNpm(["view", `${PACKAGE_NAME}@latest`, "name", "version", "bin", "--json"]),
    ) as PackageManifest;
    const version = checkManifest(manifest, `the npm registry's ${PACKAGE_NAME}`);
    return { version, installSpec: `${PACKAGE_NAME}@${version}`, label: "the npm registry" };
  }
  const file = /^https?:\/\//.test(source) ? await download(source) : path.resolve(source);
  if (!(await stat(file).catch(() => undefined))?.isFile()) {
    throw usageError(
      `The update source ${source} is not a file.`,
      "Pass --source with a package tarball (made by `npm pack`), its URL, or npm.",
    );
  }
  let manifest: PackageManifest;
  try {
    manifest = await readTarballManifest(file);
  } catch (e) {
    throw usageError(
      `The update source ${source} is unusable: ${(e as Error).message}.`,
      "Pass a tarball made by `npm pack` of Hearth.",
    );
  }
  return { version: checkManifest(manifest, source), installSpec: file, label: source };
}

/** Installs the release globally (npm's prefix: npm_config_prefix, .npmrc, or npm's default). */
export async function installRelease(release: Release, log: (text: string) => void): Promise<void> {
  await runNpm(["install", "--global", "--no-audit", "--no-fund", release.installSpec], log);
}

/** Only a package with our name and our launcher is the Hearth CLI (an unrelated "hearth" exists on npm). */
function checkManifest(manifest: PackageManifest, where: string): string {
  const bin = manifest.bin as Record<string, unknown> | undefined;
  const launcher = typeof bin?.hearth === "string" ? bin.hearth.replace(/^\.\//, "") : undefined;
  if (
    manifest.name !== PACKAGE_NAME ||
    launcher !== LAUNCHER ||
    typeof manifest.version !== "string" ||
    !semver.valid(manifest.version)
  ) {
    const what = `${String(manifest.name)}@${String(manifest.version)}`;
    throw new CliError(
      EXIT.failure,
      `${where} is ${what}, which is not the Hearth CLI (package ${PACKAGE_NAME} with the ${LAUNCHER} launcher).`,
      "Point --source (or HEARTH_UPDATE_SOURCE, or update_source in auth.ini) at a Hearth tarball.",
    );
  }
  return manifest.version;
}

async function download(url: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new CliError(
      EXIT.failure,
      `Cannot download ${url} (${String((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message)}).`,
      "Check the address, or pass --source with a local tarball.",
    );
  }
  if (!response.ok || !response.body)
    throw new CliError(
      EXIT.failure,
      `Downloading ${url} answered HTTP ${response.status}.`,
      "Check the address of the tarball.",
    );
  const dir = await mkdtemp(path.join(os.tmpdir(), "hearth-upgrade-"));
  const base = path.basename(new URL(url).pathname).replace(/\.(tgz|tar\.gz)$/, "") || "hearth";
  const file = path.join(dir, `${base}.tgz`);
  await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), createWriteStream(file));
  return file;
}

/** Runs npm; its stdout is returned (and passed to `log` line by line), a failure names npm's last words. */
function runNpm(args: string[], log?: (text: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const npm = spawn(process.platform === "win32" ? "npm.cmd" : "npm", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    npm.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      log?.(chunk.toString("utf8").trimEnd());
    });
    npm.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    npm.on("error", (e) =>
      reject(
        new CliError(
          EXIT.failure,
          `Cannot run npm (${e.message}).`,
          "Install Node.js with npm, or install the tarball by hand.",
        ),
      ),
    );
    npm.on("close", (code) => {
      if (code === 0) return resolve(stdout);
      const errors = stderr.split("\n").filter((l) => /^npm (error|ERR!)/.test(l));
      const why = errors
        .map((l) => l.replace(/^npm (error|ERR!) ?/, "").trim())
        .filter((l) => l && !/^(code |A complete log|errno )/.test(l))
        .slice(0, 2)
        .join(" ");
      reject(
        new CliError(
          EXIT.failure,
          `npm ${args[0]} failed: ${why || `exit code ${code}`}.`,
          `Try it by hand: npm ${args.join(" ")}`,
        ),
      );
    });
  });
}
