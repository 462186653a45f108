import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import semver from "semver";
import type { ServerVersion } from "../api/contract/service.js";
import { PACKAGE_NAME } from "../package-info.js";
import { fileIntegrity, INTEGRITY_PATTERN } from "../packaging/integrity.js";
import { installScriptsOf, readTarballManifest, type PackageManifest } from "../packaging/tarball-manifest.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";
import {
  checkTransport,
  download,
  fetchFollowingSameOrigin,
  integrityMismatch,
  MAX_TARBALL_BYTES,
} from "./tarball-download.js";

/**
 * Where `hearth upgrade` finds a newer CLI, and how it gets it without running a stranger's
 * code (docs/security.md, "the upgrade chain of trust"):
 *
 * - by default, the Hearth server the CLI is signed in to: /v1/version names the tarball it
 *   serves and its sha512;
 * - otherwise only a source named explicitly: a tarball's path, or its https URL (http only on
 *   this machine's loopback) with the sha512 its publisher gives (`--integrity`).
 *
 * Downloads stream to a file with a size cap, follow no redirect to another scheme, host or
 * port, and are checked against their sha512 before anything is installed. A package must be
 * the Hearth CLI (its name and launcher) with no install scripts, and npm installs it with
 * --ignore-scripts all the same.
 */

const LAUNCHER = "bin/hearth.js";

export type UpdateSource =
  | { kind: "server"; server: string }
  | { kind: "url"; url: string; integrity?: string }
  | { kind: "file"; file: string; integrity?: string };

export interface Release {
  version: string;
  /** How the source is shown to people. */
  label: string;
  /** Fetches the tarball (if it is not local) and checks it; the checked file's path. */
  fetch(): Promise<{ file: string; cleanup(): Promise<void> }>;
  /** Removes what was downloaded to read the version, when nothing is installed. */
  discard(): Promise<void>;
}

/** --source (a path or a URL) with --integrity, else the signed-in server. */
export function updateSource(options: { source?: string; integrity?: string; server: string }): UpdateSource {
  if (options.integrity !== undefined && !INTEGRITY_PATTERN.test(options.integrity)) {
    throw usageError(
      `Invalid --integrity "${options.integrity}": give a sha512 as npm writes it (sha512-… , 88 base64 characters).`,
    );
  }
  if (options.source === undefined) return { kind: "server", server: options.server };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(options.source)) {
    checkTransport(options.source, "--source");
    return { kind: "url", url: options.source, integrity: options.integrity };
  }
  return { kind: "file", file: path.resolve(options.source), integrity: options.integrity };
}

export async function findRelease(source: UpdateSource, forInstall: boolean): Promise<Release> {
  if (source.kind === "server") return serverRelease(source.server);
  if (source.kind === "url" && forInstall && source.integrity === undefined) {
    throw usageError(
      `Installing from ${source.url} needs its sha512: pass --integrity sha512-… as its publisher gives it.`,
      "The default source, the server you are signed in to, gives it by itself.",
    );
  }
  const file =
    source.kind === "url" ? await download(source.url, { integrity: source.integrity }) : await localFile(source);
  const version = await checkTarball(file.file, source.kind === "url" ? source.url : source.file).catch(
    async (error: unknown) => {
      await file.cleanup();
      throw error;
    },
  );
  const label = source.kind === "url" ? source.url : source.file;
  return { version, label, fetch: async () => file, discard: () => file.cleanup() };
}

async function serverRelease(server: string): Promise<Release> {
  const versionUrl = new URL("/v1/version", server).href;
  checkTransport(versionUrl, "the server");
  const answer = await fetchFollowingSameOrigin(versionUrl);
  if (!answer.ok) throw new CliError(EXIT.failure, `${versionUrl} answered HTTP ${answer.status}.`);
  const { cli } = (await answer.json()) as Partial<ServerVersion>;
  if (!cli) {
    throw new CliError(
      EXIT.failure,
      `The server at ${server} offers no CLI to upgrade to.`,
      "Ask its operator (GET /v1/version has no cli), or pass --source and --integrity.",
    );
  }
  if (!semver.valid(cli.version) || !INTEGRITY_PATTERN.test(cli.integrity) || cli.size > MAX_TARBALL_BYTES) {
    throw new CliError(EXIT.failure, `The server at ${server} describes its CLI in a way hearth cannot use.`);
  }
  const url = new URL(cli.url, server).href;
  return {
    version: cli.version,
    label: server,
    discard: async () => {},
    fetch: async () => {
      const file = await download(url, { integrity: cli.integrity, origin: new URL(server).origin });
      await checkTarball(file.file, url).catch(async (error: unknown) => {
        await file.cleanup();
        throw error;
      });
      return file;
    },
  };
}

/** Installs the checked tarball globally (npm's prefix: npm_config_prefix, .npmrc, or npm's default), running none of its scripts. */
export async function installRelease(release: Release, log: (text: string) => void): Promise<void> {
  const { file, cleanup } = await release.fetch();
  try {
    await runNpm(["install", "--global", "--ignore-scripts", "--no-audit", "--no-fund", file], log);
  } finally {
    await cleanup();
  }
}

async function localFile(source: { file: string; integrity?: string }) {
  if (!(await stat(source.file).catch(() => undefined))?.isFile()) {
    throw usageError(
      `The update source ${source.file} is not a file.`,
      "Pass --source with a package tarball (made by `npm pack`) or its https URL.",
    );
  }
  if (source.integrity !== undefined) {
    const { integrity } = await fileIntegrity(source.file);
    if (integrity !== source.integrity) throw integrityMismatch(source.file, source.integrity, integrity);
  }
  return { file: source.file, cleanup: async () => {} };
}

/** The Hearth CLI, with no install scripts; its version. */
async function checkTarball(file: string, where: string): Promise<string> {
  let manifest: PackageManifest;
  try {
    manifest = await readTarballManifest(file);
  } catch (e) {
    throw usageError(
      `The update source ${where} is unusable: ${(e as Error).message}.`,
      "Pass a tarball made by `npm pack` of Hearth.",
    );
  }
  const bin = manifest.bin as Record<string, unknown> | undefined;
  const launcher = typeof bin?.hearth === "string" ? bin.hearth.replace(/^\.\//, "") : undefined;
  if (
    manifest.name !== PACKAGE_NAME ||
    launcher !== LAUNCHER ||
    typeof manifest.version !== "string" ||
    !semver.valid(manifest.version)
  ) {
    throw new CliError(
      EXIT.failure,
      `${where} is ${String(manifest.name)}@${String(manifest.version)}, which is not the Hearth CLI (package ${PACKAGE_NAME} with the ${LAUNCHER} launcher).`,
      "Point --source at a Hearth tarball, or leave it out to upgrade from the server you are signed in to.",
    );
  }
  const scripts = installScriptsOf(manifest);
  if (scripts.length > 0) {
    throw new CliError(
      EXIT.failure,
      `${where} has install scripts (${scripts.join(", ")}); Hearth's CLI has none, so this is not one of its releases. Nothing was installed.`,
    );
  }
  return manifest.version;
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
