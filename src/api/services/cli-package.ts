import { execFile } from "node:child_process";
import { mkdir, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../../logger.js";
import { PACKAGE_ROOT } from "../../package-info.js";
import { fileIntegrity } from "../../packaging/integrity.js";
import { readTarballManifest } from "../../packaging/tarball-manifest.js";

const run = promisify(execFile);

export interface CliTarball {
  file: string;
  version: string;
  /** npm's integrity string: sha512-<base64>. */
  integrity: string;
  size: number;
}

/**
 * The `hearth` CLI this server offers `hearth upgrade` (docs/security.md, the upgrade chain of
 * trust): the operator's tarball (HEARTH_CLI_TARBALL), else this very package, packed by
 * `npm pack --ignore-scripts` on first request and kept for the process's life. Its sha512
 * goes out in /v1/version, so the CLI checks the download against what the server it is
 * signed in to says.
 */
export class CliPackage {
  private packed: Promise<CliTarball> | undefined;

  constructor(
    private readonly options: { prebuilt: string | undefined; workDir: string },
    private readonly log: Logger,
  ) {}

  /** The tarball, or null when none can be made (logged); /v1/version then says so. */
  async get(): Promise<CliTarball | null> {
    this.packed ??= this.make();
    try {
      return await this.packed;
    } catch (error) {
      this.packed = undefined;
      this.log.warn("cannot offer the CLI to hearth upgrade", { error: String(error) });
      return null;
    }
  }

  private async make(): Promise<CliTarball> {
    const file = this.options.prebuilt ?? (await this.pack());
    const manifest = await readTarballManifest(file);
    if (typeof manifest.version !== "string") throw new Error(`${file} has no version in its package.json`);
    return { file, version: manifest.version, ...(await fileIntegrity(file)) };
  }

  private async pack(): Promise<string> {
    await mkdir(this.options.workDir, { recursive: true });
    const dir = await mkdtemp(path.join(this.options.workDir, "pack-"));
    const { stdout } = await run(
      process.platform === "win32" ? "npm.cmd" : "npm",
      ["pack", "--json", "--ignore-scripts", "--pack-destination", dir],
      { cwd: PACKAGE_ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    const [result] = JSON.parse(stdout) as { filename: string }[];
    return path.join(dir, result!.filename);
  }
}
