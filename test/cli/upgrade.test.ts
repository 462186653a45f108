import { execFile } from "node:child_process";
import { createReadStream } from "node:fs";
import { cp, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_VERSION } from "../../src/package-info.js";
import { json, runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";

/**
 * `hearth upgrade` against package tarballs made by `npm pack` (the air-gapped way: a local
 * path or a URL). The tarballs are copies of this package's manifest and launcher with
 * another version and no dependencies, so that `npm install --global` (into a temporary
 * prefix) needs no registry.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

let work: string;
let config: Awaited<ReturnType<typeof tempConfigDir>>;
let server: http.Server;
let serverUrl: string;

/** `npm pack` of a copy of this package with `changes` to its manifest; returns the tarball's path. */
async function packCopy(name: string, changes: Record<string, unknown>): Promise<string> {
  const dir = path.join(work, name);
  await mkdir(dir, { recursive: true });
  const manifest = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8"));
  const copy = { ...manifest, dependencies: {}, devDependencies: {}, overrides: undefined, scripts: {}, ...changes };
  await writeFile(path.join(dir, "package.json"), JSON.stringify(copy, null, 2));
  await cp(path.join(ROOT, "bin"), path.join(dir, "bin"), { recursive: true });
  const { stdout } = await run("npm", ["pack", "--silent", "--pack-destination", work], { cwd: dir });
  return path.join(work, stdout.trim().split("\n").at(-1)!);
}

beforeAll(async () => {
  [work, config] = await Promise.all([mkdtemp(path.join(os.tmpdir(), "hearth-upgrade-test-")), tempConfigDir()]);
  server = http.createServer((req, res) => {
    res.setHeader("content-type", "application/octet-stream");
    createReadStream(path.join(work, path.basename(req.url ?? "")))
      .on("error", () => res.writeHead(404).end())
      .pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server?.close();
  await config?.remove();
  if (work) await rm(work, { recursive: true, force: true });
});

const hearthCli = (args: string[], env: Record<string, string> = {}) => runHearthCli(args, config.dir, { env });

describe("hearth upgrade", () => {
  it("reports a newer tarball with --check, from a path, a URL or HEARTH_UPDATE_SOURCE", async () => {
    const tarball = await packCopy("newer", { version: "99.0.0" });
    const check = await hearthCli(["upgrade", "--check", "--source", tarball]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`hearth 99.0.0 is available from ${tarball} (this is ${HEARTH_VERSION}).`);
    const url = `${serverUrl}/${path.basename(tarball)}`;
    expect(json(await hearthCli(["upgrade", "--check", "--source", url, "--output", "json"]))).toEqual({
      current: HEARTH_VERSION,
      latest: "99.0.0",
      source: url,
      updateAvailable: true,
      installed: false,
    });
    const fromEnv = await hearthCli(["upgrade", "--check", "--quiet"], { HEARTH_UPDATE_SOURCE: tarball });
    expect(fromEnv.stdout).toBe("99.0.0\n");
  });

  it("installs it with npm (into npm's prefix, here a temporary one)", async () => {
    const tarball = await packCopy("newer", { version: "99.0.0" });
    const prefix = path.join(work, "prefix");
    const install = await hearthCli(["upgrade", "--source", tarball, "--output", "json"], {
      npm_config_prefix: prefix,
    });
    expect(install.code, install.stderr).toBe(0);
    expect(json(install)).toMatchObject({ current: HEARTH_VERSION, latest: "99.0.0", installed: true });
    const installed = JSON.parse(
      await readFile(path.join(prefix, "lib", "node_modules", "hearth", "package.json"), "utf8"),
    );
    expect(installed.version).toBe("99.0.0");
    expect((await lstat(path.join(prefix, "bin", "hearth"))).isSymbolicLink()).toBe(true);
  });

  it("says so when it is up to date", async () => {
    const tarball = await packCopy("older", { version: "0.0.1" });
    const same = await hearthCli(["upgrade", "--source", tarball]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe(`hearth ${HEARTH_VERSION} is up to date (the newest at ${tarball} is 0.0.1).\n`);
  });

  it("refuses a package that is not the Hearth CLI, and a file that is not a package", async () => {
    const foreign = await packCopy("foreign", { name: "not-hearth", version: "99.0.0" });
    const refused = await hearthCli(["upgrade", "--check", "--source", foreign]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: \S+ is not-hearth@99\.0\.0, which is not the Hearth CLI/);
    const otherLauncher = await packCopy("other-launcher", { version: "99.0.0", bin: { hearth: "./cli.js" } });
    expect((await hearthCli(["upgrade", "--check", "--source", otherLauncher])).code).toBe(1);
    const notPackage = path.join(work, "not-a-package.tgz");
    await writeFile(notPackage, "hello");
    const bad = await hearthCli(["upgrade", "--source", notPackage]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a gzip'd package tarball");
    expect((await hearthCli(["upgrade", "--source", `${serverUrl}/missing.tgz`])).stderr).toContain(
      "answered HTTP 404",
    );
  });
});
