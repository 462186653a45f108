import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { usageError } from "./exit-codes.js";

/**
 * ~/.config/hearth/auth.ini: one section per profile ([default] unless --profile), each
 * with `server`, `api_key` and `account_id` (written by `hearth signin`) and optionally
 * `update_source` (for `hearth upgrade`). The file holds API keys: mode 0600.
 */

export type Profile = Record<string, string>;
export type AuthFile = Map<string, Profile>;

export const DEFAULT_PROFILE = "default";
export const AUTH_FILE_NAME = "auth.ini";

/** HEARTH_CONFIG_DIR, else $XDG_CONFIG_HOME/hearth, else ~/.config/hearth. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HEARTH_CONFIG_DIR) return path.resolve(env.HEARTH_CONFIG_DIR);
  const xdg =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME)
      ? env.XDG_CONFIG_HOME
      : path.join(os.homedir(), ".config");
  return path.join(xdg, "hearth");
}

export function authFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), AUTH_FILE_NAME);
}

/** The INI text: `[section]` headers, `key = value` lines, `#` or `;` comments. */
export function parseIni(text: string): AuthFile {
  const sections: AuthFile = new Map();
  let current: Profile | undefined;
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      const name = header[1]!.trim();
      current = sections.get(name) ?? {};
      sections.set(name, current);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0 || current === undefined)
      throw new Error(`line ${index + 1} is neither [profile] nor key = value inside a profile`);
    current[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return sections;
}

export function formatIni(file: AuthFile): string {
  const parts: string[] = [];
  for (const [name, profile] of file) {
    parts.push(`[${name}]`, ...Object.entries(profile).map(([k, v]) => `${k} = ${v}`), "");
  }
  return parts.join("\n");
}

/** The file's profiles; an empty map when there is no file. */
export async function readAuthFile(file: string): Promise<AuthFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw e;
  }
  try {
    return parseIni(text);
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
}

/** The file's profiles, or a usage error that says how to get past a file that cannot be read. */
export async function readProfiles(file: string): Promise<AuthFile> {
  try {
    return await readAuthFile(file);
  } catch (e) {
    throw usageError(
      `Cannot read ${file}: ${(e as Error).message}.`,
      "Fix or remove the file, then run `hearth signin`.",
    );
  }
}

/** Replaces one profile and keeps the others; the file (mode 0600) is replaced whole. */
export async function writeProfile(file: string, name: string, profile: Profile): Promise<void> {
  const sections = await readAuthFile(file);
  sections.set(name, profile);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, formatIni(sections), { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
}
