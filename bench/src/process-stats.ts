import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

/** Memory and CPU time of another process: /proc on Linux, `ps` elsewhere. */

const run = promisify(execFile);

/** Resident set size in bytes (VmRSS). */
export async function residentBytes(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = status.match(/^VmRSS:\s+(\d+)\s+kB$/m);
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux: ask ps
  }
  const { stdout } = await run("ps", ["-o", "rss=", "-p", String(pid)]);
  return Number(stdout.trim()) * 1024;
}

let ticksPerSecond: number | undefined;

/** User + system CPU seconds the process has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticksPerSecond ??= Number((await run("getconf", ["CLK_TCK"])).stdout.trim()) || 100;
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    const { stdout } = await run("ps", ["-o", "time=", "-p", String(pid)]);
    return stdout
      .trim()
      .split(/[:-]/)
      .map(Number)
      .reduce((total, part) => total * 60 + part, 0);
  }
}

/** CPU seconds used so far by each named process, and by this one under `own`. */
export type CpuTimes = Record<string, number>;

export async function cpuTimes(pids: Record<string, number>, own: string): Promise<CpuTimes> {
  const entries = await Promise.all(Object.entries(pids).map(async ([name, pid]) => [name, await cpuSeconds(pid)]));
  const usage = process.cpuUsage();
  return { ...Object.fromEntries(entries), [own]: (usage.user + usage.system) / 1e6 };
}

/** The CPU milliseconds each process used between two readings. */
export function cpuSpentMs(before: CpuTimes, after: CpuTimes): CpuTimes {
  return Object.fromEntries(Object.keys(after).map((name) => [name, (after[name]! - (before[name] ?? 0)) * 1000]));
}
