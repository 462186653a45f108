/**
 * What the versus scenario reads of each process's CPU: a busy child's CPU time grows with its
 * work, this process's is reported under the name asked for, and the local Redis is found by
 * the process ID it reports (a remote one is not read).
 */
import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { localRedisPid } from "../../bench/src/machine.js";
import { cpuSpentMs, cpuTimes } from "../../bench/src/process-stats.js";

describe("CPU time by process", () => {
  it("counts a busy child's CPU and this process's own, between two readings", async () => {
    // Once told, spins until it has used 400 ms of CPU (not of the clock: on a busy machine a
    // core is shared), and says so; then waits to be killed.
    const child = spawn(process.execPath, [
      "-e",
      `process.stdin.once("data", () => {
        const start = process.cpuUsage();
        const used = () => { const u = process.cpuUsage(start); return u.user + u.system; };
        while (used() < 400_000);
        process.stdout.write("done");
      });`,
    ]);
    try {
      const before = await cpuTimes({ busy: child.pid! }, "self");
      const done = new Promise((resolve) => child.stdout.once("data", resolve));
      child.stdin.write("go");
      const start = process.cpuUsage();
      const used = () => {
        const u = process.cpuUsage(start);
        return u.user + u.system;
      };
      while (used() < 200_000); // this process's own 200 ms
      await done;
      const spent = cpuSpentMs(before, await cpuTimes({ busy: child.pid! }, "self"));
      expect(Object.keys(spent).sort()).toEqual(["busy", "self"]);
      // Clock ticks of 10 ms, and what is left of the child's start-up after the first reading.
      expect(spent.busy).toBeGreaterThan(350);
      expect(spent.busy).toBeLessThan(1_500);
      expect(spent.self).toBeGreaterThanOrEqual(190);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("finds the local Redis's process, and reads no remote one", async () => {
    const pid = await localRedisPid(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    expect(pid).toBeGreaterThan(0);
    await access(`/proc/${pid}/stat`);
    expect(await localRedisPid("redis://redis.example:6379")).toBeUndefined();
  });
});
