import { existsSync } from "node:fs";
import path from "node:path";
import { HEARTH_VERSION, PACKAGE_NAME, PACKAGE_ROOT } from "../../package-info.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";

/**
 * `hearth upgrade`: compares this CLI's version with the newest at the update source and
 * installs it with `npm install --global --ignore-scripts`. The source: the Hearth server the
 * CLI is signed in to (it names its tarball and the tarball's sha512), unless one is named:
 * --source, HEARTH_UPDATE_SOURCE or update_source in the profile (docs/security.md).
 */
export function registerUpgradeCommand({ program }: Verbs): void {
  examples(
    program
      .command("upgrade")
      .description("Install the newest hearth CLI from the server you are signed in to (or a named tarball)")
      .option("--check", "only report whether a newer version exists")
      .option("--source <url|path>", "a tarball made by `npm pack`: its https URL or its path")
      .option("--integrity <sha512>", "the tarball's sha512 (sha512-…), as its publisher gives it; needed for a URL")
      .action(withContext(upgrade)),
    [
      "hearth upgrade --check",
      "hearth upgrade                                            # from the signed-in server",
      "hearth upgrade --source ./hearth-0.2.0.tgz                 # air-gapped",
      "hearth upgrade --source https://files.internal/hearth-0.2.0.tgz --integrity sha512-…",
    ],
  ).addHelpText("after", "npm installs into its global prefix (npm prefix -g; npm_config_prefix overrides).\n");
}

async function upgrade(ctx: CliContext, options: { check?: boolean; source?: string; integrity?: string }) {
  // semver, the download and the tarball checks load with this command, not at every start.
  const [{ default: semver }, { findRelease, installRelease, updateSource }] = await Promise.all([
    import("semver"),
    import("../update-source.js"),
  ]);
  const named = options.source ?? ctx.env.HEARTH_UPDATE_SOURCE ?? ctx.profile.update_source;
  const source = updateSource({ source: named, integrity: options.integrity, server: ctx.server });
  const { out } = ctx;
  const release = await findRelease(source, !options.check);
  const newer = semver.gt(release.version, HEARTH_VERSION);
  const report = { current: HEARTH_VERSION, latest: release.version, source: release.label, updateAvailable: newer };
  if (!newer || options.check) {
    await release.discard();
    out.result(
      { ...report, installed: false },
      () =>
        newer
          ? [
              `${PACKAGE_NAME} ${release.version} is available from ${release.label} (this is ${HEARTH_VERSION}).`,
              `Install it with: hearth upgrade${options.source ? ` --source ${options.source}` : ""}`,
            ]
          : `hearth ${HEARTH_VERSION} is up to date (the newest at ${release.label} is ${release.version}).`,
      () => release.version,
    );
    return;
  }
  if (existsSync(path.join(PACKAGE_ROOT, ".git"))) {
    out.note(
      "This hearth runs from a git clone: the upgrade installs a separate global copy; update the clone with git pull.",
    );
  }
  out.note(`Installing ${PACKAGE_NAME} ${release.version} from ${release.label} (its sha512 checked, no scripts run)…`);
  await installRelease(release, (line) => out.note(line));
  out.result(
    { ...report, installed: true },
    () => `Installed hearth ${release.version} (was ${HEARTH_VERSION}); run \`hearth version\` to check.`,
    () => release.version,
  );
}
