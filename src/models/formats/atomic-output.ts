import { randomBytes } from "node:crypto";
import { access, mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";

/**
 * Produces a file or folder under a temporary name next to its destination and renames
 * it into place, so readers never see a half-written artifact and concurrent builders
 * (API and worker starting together) do not trip over each other.
 */

function temporaryName(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
}

export async function writeFileAtomically(target: string, write: (tmpPath: string) => Promise<void>): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = temporaryName(target);
  try {
    await write(tmp);
    await rename(tmp, target);
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * Fills a fresh folder and moves it to `target`. An existing `target` is replaced when
 * `replace` is set; otherwise, if another process put one there first, theirs is kept.
 */
export async function writeFolderAtomically(
  target: string,
  fill: (tmpDir: string) => Promise<void>,
  options: { replace: boolean },
): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = temporaryName(target);
  const displaced: string[] = [];
  try {
    await mkdir(tmp);
    await fill(tmp);
    for (let attempt = 0; ; attempt++) {
      if (options.replace) {
        const old = temporaryName(target);
        displaced.push(old);
        await rename(target, old).catch(ignoreMissing);
      }
      try {
        await rename(tmp, target);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
        // Another builder moved its folder in first.
        if (!options.replace) return;
        if (attempt >= 3) throw err;
      }
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
    for (const old of displaced) await rm(old, { recursive: true, force: true });
  }
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== "ENOENT") throw err;
}

export async function pathExists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** A folder whose files all exist is complete; one missing some is incomplete (and rebuilt). */
export async function folderState(dir: string, names: string[]): Promise<"complete" | "incomplete" | "missing"> {
  if (!(await pathExists(dir))) return "missing";
  for (const name of names) if (!(await pathExists(path.join(dir, name)))) return "incomplete";
  return "complete";
}
