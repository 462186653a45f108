import { execFile } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerVersion } from "../../src/api/contract/service.js";
import { HEARTH_VERSION } from "../../src/package-info.js";
import { fileIntegrity } from "../../src/packaging/integrity.js";
import { startTestHearth } from "../helpers/hearth.js";
import { json, runHearthCli, tempConfigDir } from "../helpers/run-hearth.js";

/**
 * `hearth upgrade` against package tarballs made by `npm pack`: from the Hearth server it is
 * signed in to (the default), a local path or a URL, and each way a stranger's code could get in. The tarballs are copies of this package's manifest and launcher with
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
  const { stdout } = await run("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", work], {
    cwd: dir,
  });
  return path.join(work, stdout.trim().split("\n").at(-1)!);
}

beforeAll(async () => {
  [work, config] = await Promise.all([mkdtemp(path.join(os.tmpdir(), "hearth-upgrade-test-")), tempConfigDir()]);
  server = http.createServer((req, res) => {
    const url = req.url ?? "";
    const port = (server.address() as { port: number }).port;
    // Redirects elsewhere: another host (127.0.0.2 is this machine too), another scheme.
    if (url.startsWith("/to-host/"))
      return res.writeHead(302, { location: `http://127.0.0.2:${port}/${path.basename(url)}` }).end();
    if (url.startsWith("/to-https/"))
      return res.writeHead(302, { location: `https://127.0.0.1:${port}/${path.basename(url)}` }).end();
    if (url.startsWith("/same/")) return res.writeHead(302, { location: `/${path.basename(url)}` }).end();
    if (url === "/huge.tgz") {
      // 65 MiB of zeros, made on the fly, with no Content-Length to refuse it by.
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(1024 * 1024);
      let sent = 0;
      const more = () => {
        while (sent < 65 && res.write(chunk)) sent++;
        if (sent >= 65) res.end();
      };
      res.on("drain", () => {
        sent++;
        more();
      });
      res.on("error", () => {});
      return more();
    }
    res.setHeader("content-type", "application/octet-stream");
    createReadStream(path.join(work, path.basename(url)))
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
    expect((await hearthCli(["upgrade", "--check", "--source", `${serverUrl}/missing.tgz`])).stderr).toContain(
      "answered HTTP 404",
    );
  });
});

describe("hearth upgrade cannot install a stranger's code", () => {
  const prefix = () => path.join(work, `prefix-${Math.random().toString(36).slice(2)}`);
  const nothingIn = async (dir: string) => expect(await readdir(dir).catch(() => [])).toEqual([]);

  it("refuses a tarball with an install script, installing nothing", async () => {
    const scripted = await packCopy("scripted", {
      version: "99.0.0",
      scripts: { postinstall: "node -e \"require('fs').writeFileSync('pwned','')\"" },
    });
    const target = prefix();
    const refused = await hearthCli(["upgrade", "--source", scripted], { npm_config_prefix: target });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("has install scripts (postinstall); Hearth's CLI has none");
    await nothingIn(target);
  });

  it("installs a package with a prepare script, as Hearth's own, and never runs it", async () => {
    // npm runs prepare only where it installs from a folder or a git checkout, not a tarball.
    const marker = path.join(work, "prepare-ran");
    const tarball = await packCopy("prepared", {
      version: "99.0.0",
      scripts: { prepare: `node -e "require('fs').writeFileSync('${marker}','')"` },
    });
    const install = await hearthCli(["upgrade", "--source", tarball, "--output", "json"], {
      npm_config_prefix: prefix(),
    });
    expect(install.code, install.stderr).toBe(0);
    expect(json(install)).toMatchObject({ latest: "99.0.0", installed: true });
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses a download whose sha512 is not the one given, and a URL without one", async () => {
    const tarball = await packCopy("digest", { version: "99.0.0" });
    const other = await packCopy("other-digest", { version: "98.0.0" });
    const { integrity } = await fileIntegrity(other);
    const target = prefix();
    const url = `${serverUrl}/${path.basename(tarball)}`;
    const wrong = await hearthCli(["upgrade", "--source", url, "--integrity", integrity], {
      npm_config_prefix: target,
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("does not have the expected sha512");
    expect(wrong.stderr).toContain("Nothing was installed.");
    const none = await hearthCli(["upgrade", "--source", url], { npm_config_prefix: target });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("needs its sha512: pass --integrity");
    await nothingIn(target);
    // With the right one it installs.
    const right = (await fileIntegrity(tarball)).integrity;
    const ok = await hearthCli(["upgrade", "--source", url, "--integrity", right], { npm_config_prefix: target });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("follows no redirect to another host or scheme, and fetches over http only from this machine", async () => {
    const tarball = path.basename(await packCopy("redirected", { version: "99.0.0" }));
    for (const hop of ["to-host", "to-https"]) {
      const moved = await hearthCli(["upgrade", "--check", "--source", `${serverUrl}/${hop}/${tarball}`]);
      expect(moved.code, hop).toBe(1);
      expect(moved.stderr).toMatch(/redirects to \S+, another scheme, host or port; hearth upgrade does not follow it/);
    }
    // Within the same origin a redirect is followed.
    expect((await hearthCli(["upgrade", "--check", "--source", `${serverUrl}/same/${tarball}`])).code).toBe(0);
    const clear = await hearthCli(["upgrade", "--check", "--source", "http://example.com/hearth.tgz"]);
    expect(clear.code).toBe(2);
    expect(clear.stderr).toContain("hearth upgrade fetches over https only (http only from this machine)");
  });

  it("stops a download past its size cap, without holding it in memory", async () => {
    const huge = await hearthCli(["upgrade", "--check", "--source", `${serverUrl}/huge.tgz`]);
    expect(huge.code).toBe(1);
    expect(huge.stderr).toContain(`is larger than ${64 * 1024 * 1024} bytes, more than any hearth CLI tarball`);
  });

  it("upgrades from the server it is signed in to, checking the tarball against the server's sha512", async () => {
    const tarball = await packCopy("served", { version: "99.0.0" });
    const hearth = await startTestHearth({ worker: false, env: { HEARTH_CLI_TARBALL: tarball } });
    try {
      const version = (await (await fetch(`${hearth.url}/v1/version`)).json()) as ServerVersion;
      expect(version.cli).toEqual({ version: "99.0.0", url: "/v1/cli/hearth.tgz", ...(await fileIntegrity(tarball)) });
      const target = prefix();
      const env = { HEARTH_BASE_URL: hearth.url, npm_config_prefix: target };
      // Code and stderr first: CI once saw this run print nothing to stdout, with no way to tell why.
      const check = await hearthCli(["upgrade", "--check", "--output", "json"], env);
      expect(check.code, check.stderr).toBe(0);
      expect(json(check)).toMatchObject({
        latest: "99.0.0",
        source: hearth.url,
        updateAvailable: true,
      });
      const install = await hearthCli(["upgrade", "--output", "json"], env);
      expect(install.code, install.stderr).toBe(0);
      expect(json(install)).toMatchObject({ latest: "99.0.0", installed: true });
      expect((await lstat(path.join(target, "bin", "hearth"))).isSymbolicLink()).toBe(true);
    } finally {
      await hearth.close();
    }
  });

  it("serves its own package when given none: npm pack of this very code, with its sha512", async () => {
    const hearth = await startTestHearth({ worker: false });
    try {
      const version = (await (await fetch(`${hearth.url}/v1/version`)).json()) as ServerVersion;
      expect(version.cli).toMatchObject({ version: HEARTH_VERSION, url: "/v1/cli/hearth.tgz" });
      const bytes = Buffer.from(await (await fetch(`${hearth.url}/v1/cli/hearth.tgz`)).arrayBuffer());
      expect(bytes.length).toBe(version.cli!.size);
      expect(`sha512-${createHash("sha512").update(bytes).digest("base64")}`).toBe(version.cli!.integrity);
      // The compiled CLI travels in it, so that the upgraded `hearth` starts as fast.
      const served = path.join(work, "served-own.tgz");
      await writeFile(served, bytes);
      const entries = (await run("tar", ["-tzf", served])).stdout.split("\n");
      expect(entries).toEqual(expect.arrayContaining(["package/dist/cli/main.js", "package/dist/cli/sources.json"]));
      const check = await hearthCli(["upgrade", "--check"], { HEARTH_BASE_URL: hearth.url });
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toContain(
        `hearth ${HEARTH_VERSION} is up to date (the newest at ${hearth.url} is ${HEARTH_VERSION}).`,
      );
    } finally {
      await hearth.close();
    }
  }, 120_000);
});
