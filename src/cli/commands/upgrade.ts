import { existsSync } from "node:fs";
import semver from "semver";
import { HEARTH_VERSION, PACKAGE_NAME } from "../../package-info.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { NPM_SOURCE, findRelease, installRelease } from "../update-source.js";

/**
 * `hearth upgrade`: compares this CLI's version with the newest at the update source and
 * installs it with `npm install --global`. The source: --source, else HEARTH_UPDATE_SOURCE,
 * else update_source in the profile, else the npm registry.
 */
export function registerUpgradeCommand({ program }: Verbs): void {
  examples(
    program
      .command("upgrade")
      .description("Install the newest hearth CLI from the update source (the npm registry, or a package tarball)")
      .option("--check", "only report whether a newer version exists")
      .option(
        "--source <url|path|npm>",
        "where to look: npm (the registry), or the URL or path of a tarball made by `npm pack`",
      )
      .action(withContext(upgrade)),
    [
      "hearth upgrade --check",
      "hearth upgrade",
      "hearth upgrade --source ./hearth-0.2.0.tgz                 # air-gapped",
      "hearth upgrade --source https://files.internal/hearth-0.2.0.tgz",
    ],
  ).addHelpText("after", "npm installs into its global prefix (npm prefix -g; npm_config_prefix overrides).\n");
}

async function upgrade(ctx: CliContext, options: { check?: boolean; source?: string }): Promise<void> {
  const source = options.source ?? ctx.env.HEARTH_UPDATE_SOURCE ?? ctx.profile.update_source ?? NPM_SOURCE;
  const { out } = ctx;
  const release = await findRelease(source);
  const newer = semver.gt(release.version, HEARTH_VERSION);
  const report = { current: HEARTH_VERSION, latest: release.version, source: release.label, updateAvailable: newer };
  if (!newer || options.check) {
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
  if (existsSync(new URL("../../../.git", import.meta.url))) {
    out.note(
      "This hearth runs from a git clone: the upgrade installs a separate global copy; update the clone with git pull.",
    );
  }
  out.note(`Installing ${PACKAGE_NAME} ${release.version} from ${release.label}…`);
  await installRelease(release, (line) => out.note(line));
  out.result(
    { ...report, installed: true },
    () => `Installed hearth ${release.version} (was ${HEARTH_VERSION}); run \`hearth version\` to check.`,
    () => release.version,
  );
}
