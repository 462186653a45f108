import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A copy of this repository as a fresh clone after `npm ci` has it: the files git tracks (and
 * new ones it does not ignore), node_modules linked in, the prepare script run, and no data
 * directory. Copied, not linked, so that every path in it is its own (an entry point
 * compares its own URL with argv).
 */
export async function freshClone(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-clone-"));
  const remove = () => fs.rm(dir, { recursive: true, force: true });
  try {
    await fill(dir);
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}

async function fill(dir: string): Promise<void> {
  const { stdout } = await promisify(execFile)(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  const files = stdout.split("\0").filter((f) => f !== "");
  for (const file of files) {
    const from = path.join(root, file);
    // A tracked file deleted in the working tree is not part of the clone either.
    const stat = await fs.lstat(from).catch(() => undefined);
    if (!stat?.isFile()) continue;
    await fs.mkdir(path.join(dir, path.dirname(file)), { recursive: true });
    await fs.copyFile(from, path.join(dir, file));
    await fs.chmod(path.join(dir, file), stat.mode & 0o777);
  }
  await fs.symlink(await fs.realpath(path.join(root, "node_modules")), path.join(dir, "node_modules"));
  // What `npm ci` runs after installing: the package's own build step, if it has one.
  await promisify(execFile)("npm", ["run", "--if-present", "prepare"], {
    cwd: dir,
    env: { ...process.env, npm_config_offline: "true" },
  });
}
