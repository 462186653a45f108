import { describe, expect, it } from "vitest";
import { type Arrangement, PassPlanner } from "../../../src/workers/engine/pass-planner.js";

/** Runs `steps` steps of `n` sequences through the planner, each costing what `cost` says; returns the arrangements. */
function drive(planner: PassPlanner, n: number, steps: number, cost: (a: Arrangement) => number): Arrangement[] {
  const chosen: Arrangement[] = [];
  for (let i = 0; i < steps; i++) {
    const a = planner.arrange(n);
    chosen.push(a);
    planner.record({ sequences: n, passes: a === "together" ? 1 : n, ms: cost(a) });
  }
  return chosen;
}

// Figures of the 135M shape in Q8_0 on 2 EPYC vCPUs (ms a step): pass-planner.ts.
const cpu2 = (a: Arrangement) => (a === "together" ? 33 : 19);
const cpu16 = (a: Arrangement) => (a === "together" ? 72 : 129);
// A GPU: a pass each costs n times one pass.
const gpu16 = (a: Arrangement) => (a === "together" ? 2.5 : 40);

describe("PassPlanner", () => {
  it("decodes a lone sequence in one pass, and never asks about it", () => {
    const planner = new PassPlanner();
    expect(drive(planner, 1, 100, () => 8)).toEqual(Array(100).fill("together"));
  });

  it("tries both ways first, then keeps to the faster, for each size of its own", () => {
    const planner = new PassPlanner();
    const two = drive(planner, 2, 60, cpu2);
    expect(two.slice(0, 6)).toEqual(["together", "together", "together", "apart", "apart", "apart"]);
    expect(new Set(two.slice(6))).toEqual(new Set(["apart"]));
    const sixteen = drive(planner, 16, 60, cpu16);
    expect(sixteen.slice(0, 4)).toEqual(["together", "together", "together", "apart"]);
    // A pass each slower by half after one try: not tried again at first.
    expect(sixteen.slice(4).filter((a) => a === "apart")).toEqual([]);
  });

  it("tries the other way again now and then, less often each time it loses, so a GPU pays little", () => {
    const planner = new PassPlanner();
    const steps = drive(planner, 16, 20_000, gpu16);
    const apart = steps.flatMap((a, i) => (a === "apart" ? [i] : []));
    // The first try, then checks at growing intervals: 64, 128, 256 … up to 8,192 steps.
    expect(apart.length).toBeLessThan(15);
    const gaps = apart.slice(1).map((i, k) => i - apart[k]!);
    for (let k = 1; k < gaps.length; k++) expect(gaps[k]).toBeGreaterThanOrEqual(gaps[k - 1]!);
    // What the GPU pays for the checks: under 1 % of its decode time.
    const paid = apart.length * (gpu16("apart") - gpu16("together"));
    expect(paid / (steps.length * gpu16("together"))).toBeLessThan(0.01);
  });

  it("skips trying a pass each where one pass won at fewer sequences (a GPU, from 2 on)", () => {
    const planner = new PassPlanner();
    drive(planner, 2, 10, (a) => (a === "together" ? 2.5 : 5));
    const sixteen = drive(planner, 16, 100, gpu16);
    // Not tried before the first check, 64 steps in.
    expect(sixteen.indexOf("apart")).toBe(63);
    expect(sixteen.filter((a) => a === "apart")).toHaveLength(1);
    // Where a pass each won at 2 (a CPU), 16 is tried both ways.
    const cpu = new PassPlanner();
    drive(cpu, 2, 10, cpu2);
    expect(drive(cpu, 16, 4, cpu16)).toEqual(["together", "together", "together", "apart"]);
  });

  it("follows a change: when one pass turns faster, the checks find it and it takes over", () => {
    const planner = new PassPlanner();
    expect(drive(planner, 4, 100, (a) => (a === "together" ? 40 : 30)).at(-1)).toBe("apart");
    const after = drive(planner, 4, 400, (a) => (a === "together" ? 20 : 30));
    expect(after.slice(-50)).toEqual(Array(50).fill("together"));
  });

  it("leaves out steps split by IDs apart: neither one pass nor a pass each", () => {
    const planner = new PassPlanner();
    for (let i = 0; i < 3; i++) planner.record({ sequences: 4, passes: 1, ms: 40 });
    for (let i = 0; i < 20; i++) planner.record({ sequences: 4, passes: 2, ms: 1 });
    expect(planner.arrange(4)).toBe("apart");
  });
});
