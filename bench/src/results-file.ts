import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { BenchReport } from "./run-bench.js";

/** Writes bench/results/<timestamp>-<mode>.json and bench/results/latest.json; returns the first. */
export async function writeResults(dir: string, report: BenchReport): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, "-");
  const file = path.join(dir, `${stamp}-${report.mode}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  for (const target of [file, path.join(dir, "latest.json")]) {
    const tmp = `${target}.tmp`;
    await writeFile(tmp, text);
    await rename(tmp, target);
  }
  return file;
}
