import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usableCores } from "../../src/process/usable-cores.js";

describe("usableCores", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "hearth-cgroup-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function cgroup(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(path.join(root, "cg-"));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), `${text}\n`);
    }
    return dir;
  }

  it("is the affinity's count with no cgroup quota", async () => {
    expect(usableCores({ cgroupRoot: await cgroup({}), parallelism: 16 })).toBe(16);
    expect(usableCores({ cgroupRoot: await cgroup({ "cpu.max": "max 100000" }), parallelism: 16 })).toBe(16);
  });

  it("is capped by a cgroup v2 quota (a container's --cpus), rounded up, at least 1", async () => {
    expect(usableCores({ cgroupRoot: await cgroup({ "cpu.max": "200000 100000" }), parallelism: 16 })).toBe(2);
    expect(usableCores({ cgroupRoot: await cgroup({ "cpu.max": "150000 100000" }), parallelism: 16 })).toBe(2);
    expect(usableCores({ cgroupRoot: await cgroup({ "cpu.max": "50000 100000" }), parallelism: 16 })).toBe(1);
    // The affinity still bounds a larger quota.
    expect(usableCores({ cgroupRoot: await cgroup({ "cpu.max": "800000 100000" }), parallelism: 4 })).toBe(4);
  });

  it("reads cgroup v1's cfs quota too", async () => {
    const v1 = await cgroup({ "cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000" });
    expect(usableCores({ cgroupRoot: v1, parallelism: 16 })).toBe(3);
    const unlimited = await cgroup({ "cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000" });
    expect(usableCores({ cgroupRoot: unlimited, parallelism: 16 })).toBe(16);
  });

  it("is never more than this machine's count, read for real", () => {
    expect(usableCores()).toBeGreaterThanOrEqual(1);
    expect(usableCores()).toBeLessThanOrEqual(os.availableParallelism());
  });
});
