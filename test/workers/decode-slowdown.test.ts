import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { WorkerMetrics } from "../../src/metrics/worker-metrics.js";
import { DecodeSlowdown } from "../../src/workers/decode-slowdown.js";
import { watchDecodes } from "../../src/workers/decode-watch.js";
import type { DecodeSample } from "../../src/workers/engine/engine.js";

const step = (sequences: number, ms: number): DecodeSample => ({ tokens: sequences, sequences, ms });
const window = (sequences: number, ms: number) => Array.from({ length: 4 }, () => step(sequences, ms));
const options = { window: 4, factor: 3, recover: 1.5 };

describe("DecodeSlowdown", () => {
  it("flags steps far slower than the model's best, and clears once they are back near it", () => {
    const slowdown = new DecodeSlowdown(options);
    const feed = (samples: DecodeSample[]) => samples.map((s) => slowdown.record(s)).filter(Boolean);
    expect(feed(window(1, 8))).toEqual([]); // the first window sets the model's figure
    expect(feed(window(1, 16))).toEqual([]); // 2x: slower, not oversubscribed
    expect(slowdown.ratio).toBe(2);
    expect(feed([step(1, 30), step(1, 40), step(1, 50), step(1, 90)])).toEqual([
      { oversubscribed: true, ratio: 45 / 8, stepMs: 45, bestMs: 8, sequences: 1 },
    ]);
    expect(slowdown.oversubscribed).toBe(true);
    expect(feed(window(1, 16))).toEqual([]); // 2x: still flagged until back under 1.5x
    expect(feed(window(1, 10))).toEqual([{ oversubscribed: false, ratio: 1.25, stepMs: 10, bestMs: 8, sequences: 1 }]);
    expect(slowdown.oversubscribed).toBe(false);
  });

  it("compares each batch size with its own best, and leaves prompts out", () => {
    const slowdown = new DecodeSlowdown(options);
    for (const s of [...window(1, 8), ...window(16, 40), ...window(16, 44), ...window(9, 45)])
      expect(slowdown.record(s)).toBeUndefined();
    // 9 sequences count with 16 (45 ms against 40), not with 1 sequence's 8 ms.
    expect(slowdown.ratio).toBe(1.125);
    // A prompt's batch (many tokens per sequence) takes what its length costs: never counted.
    for (let i = 0; i < 8; i++) expect(slowdown.record({ tokens: 400, sequences: 16, ms: 2_000 })).toBeUndefined();
    expect(slowdown.oversubscribed).toBe(false);
    expect(slowdown.record({ tokens: 0, sequences: 0, ms: 1 })).toBeUndefined();
  });

  it("takes a faster window as the new best", () => {
    const slowdown = new DecodeSlowdown(options);
    for (const s of [...window(2, 30), ...window(2, 10), ...window(2, 29)]) slowdown.record(s);
    expect(slowdown.ratio).toBeCloseTo(2.9);
  });
});

describe("watchDecodes", () => {
  it("puts batch sizes and step times on the worker's metrics, and says in the log when threads wait for the CPU", async () => {
    const metrics = new WorkerMetrics("w-test");
    const lines: string[] = [];
    const onDecode = watchDecodes(
      "tiny",
      2,
      metrics,
      createLogger("info", "test", (l) => lines.push(l)),
      options,
    );
    /** A sample of `name` (a gauge, or a histogram's `_count`) for the model. */
    const value = async (name: string, suffix = "") => {
      const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name)!;
      const values = metric.values as { value: number; labels: Record<string, unknown>; metricName?: string }[];
      return values.find((v) => v.labels.model === "tiny" && (v.metricName ?? name) === name + suffix)?.value;
    };
    expect(await value("hearth_worker_cpu_oversubscribed")).toBe(0);
    onDecode({ tokens: 30, sequences: 3, ms: 50 });
    for (const s of [...window(1, 8), ...window(1, 80)]) onDecode(s);
    expect(await value("hearth_worker_decode_batch_tokens", "_count")).toBe(9);
    expect(await value("hearth_worker_decode_step_seconds", "_count")).toBe(8);
    expect(await value("hearth_worker_decode_slowdown_ratio")).toBe(10);
    expect(await value("hearth_worker_cpu_oversubscribed")).toBe(1);
    const warning = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === "warn")!;
    expect(warning.msg).toMatch(/10x slower .* 2 thread\(s\) .*HEARTH_WORKER_THREADS/);
    expect(warning).toMatchObject({ model: "tiny", ratio: 10, stepMs: 80, bestMs: 8, threads: 2 });
    for (const s of window(1, 9)) onDecode(s);
    expect(await value("hearth_worker_cpu_oversubscribed")).toBe(0);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>).at(-1)).toMatchObject({ level: "info" });
    // The express context's steps, slow beside the shared context's: on the metrics, never compared.
    const logged = lines.length;
    for (const s of window(1, 80)) onDecode({ ...s, express: true });
    expect(await value("hearth_worker_decode_step_seconds", "_count")).toBe(16);
    expect(await value("hearth_worker_cpu_oversubscribed")).toBe(0);
    expect(lines).toHaveLength(logged);
  });

  it("at one thread, advises cores of its own, never fewer threads", () => {
    const warnings = (threads: number) => {
      const lines: string[] = [];
      const onDecode = watchDecodes(
        "tiny",
        threads,
        new WorkerMetrics("w-test"),
        createLogger("info", "test", (l) => lines.push(l)),
        options,
      );
      for (const s of [...window(1, 8), ...window(1, 80)]) onDecode(s);
      return lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === "warn");
    };
    const [one] = warnings(1);
    expect(one?.msg).toMatch(/10x slower .*a core of its own/);
    expect(one?.msg).not.toContain("HEARTH_WORKER_THREADS");
    expect(warnings(4)[0]?.msg).toContain("Lower HEARTH_WORKER_THREADS (now 4)");
  });
});
