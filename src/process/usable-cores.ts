import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The cores this process may really use: those its CPU affinity allows (what
 * os.availableParallelism reports), and no more than its cgroup's CPU quota (a container with
 * `--cpus 2` on a 16-core host sees 16 cores and gets 2). Threads sized to more than this spin
 * against each other: llama.cpp's threads busy-wait, so every decode then waits for a time slice.
 */
export function usableCores(options: { cgroupRoot?: string; parallelism?: number } = {}): number {
  const affinity = options.parallelism ?? os.availableParallelism();
  const quota = cgroupCpuQuota(options.cgroupRoot ?? "/sys/fs/cgroup");
  return Math.max(1, quota === undefined ? affinity : Math.min(affinity, Math.ceil(quota)));
}

/** The cgroup's CPU quota in cores (v2's cpu.max, else v1's cfs quota), or undefined for none. */
export function cgroupCpuQuota(root: string): number | undefined {
  const v2 = read(path.join(root, "cpu.max"))?.split(/\s+/);
  if (v2 && v2.length >= 2) return v2[0] === "max" ? undefined : cores(Number(v2[0]), Number(v2[1]));
  const quota = Number(read(path.join(root, "cpu", "cpu.cfs_quota_us")) ?? Number.NaN);
  const period = Number(read(path.join(root, "cpu", "cpu.cfs_period_us")) ?? Number.NaN);
  return quota > 0 ? cores(quota, period) : undefined;
}

function cores(quota: number, period: number): number | undefined {
  return Number.isFinite(quota) && Number.isFinite(period) && quota > 0 && period > 0 ? quota / period : undefined;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
}
