import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authFilePath, configDir, formatIni, parseIni, readAuthFile, writeProfile } from "../../src/cli/config-file.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hearth-config-file-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("auth.ini", () => {
  it("lives in HEARTH_CONFIG_DIR, else $XDG_CONFIG_HOME/hearth, else ~/.config/hearth", () => {
    expect(authFilePath({ HEARTH_CONFIG_DIR: "/etc/h", XDG_CONFIG_HOME: "/x" })).toBe("/etc/h/auth.ini");
    expect(configDir({ XDG_CONFIG_HOME: "/x" })).toBe("/x/hearth");
    expect(configDir({ XDG_CONFIG_HOME: "relative/ignored" })).toBe(path.join(os.homedir(), ".config", "hearth"));
    expect(configDir({})).toBe(path.join(os.homedir(), ".config", "hearth"));
  });

  it("reads profiles as sections, with comments, and writes them back", () => {
    const text =
      "# mine\n[default]\nserver = http://localhost:8080\napi_key = hth_abc=def\n\n[staging]\n; other\nserver=https://s.example\n";
    const file = parseIni(text);
    expect(file.get("default")).toEqual({ server: "http://localhost:8080", api_key: "hth_abc=def" });
    expect(file.get("staging")).toEqual({ server: "https://s.example" });
    expect(parseIni(formatIni(file))).toEqual(file);
    expect(() => parseIni("key = outside a section")).toThrow(/line 1/);
  });

  it("writes one profile, keeps the others, with mode 0600", async () => {
    const file = path.join(dir, "nested", "auth.ini");
    expect(await readAuthFile(file)).toEqual(new Map());
    await writeProfile(file, "default", { server: "http://a", api_key: "k1" });
    await writeProfile(file, "other", { server: "http://b", api_key: "k2" });
    await writeProfile(file, "default", { server: "http://c", api_key: "k3" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const profiles = await readAuthFile(file);
    expect([...profiles.keys()]).toEqual(["default", "other"]);
    expect(profiles.get("default")).toEqual({ server: "http://c", api_key: "k3" });
    expect(await readFile(file, "utf8")).toContain("[other]\nserver = http://b\napi_key = k2\n");
  });

  it("makes an existing, more open file 0600 when it writes it", async () => {
    const file = path.join(dir, "open.ini");
    await writeFile(file, "[default]\nserver = http://a\n", { mode: 0o644 });
    await writeProfile(file, "default", { server: "http://a", api_key: "secret" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});
