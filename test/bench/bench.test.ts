/**
 * The bench is not a test, but its code is: every scenario runs here through the same
 * code as `npm run bench`, with tiny sizes (one request where it can), a small model
 * shape built by the same factory, and the real API and worker processes. Only the
 * structure of the results is checked, never a timing.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BenchHttp } from "../../bench/src/http-client.js";
import { eventually } from "../helpers/eventually.js";
import { silentProgress } from "../../bench/src/progress.js";
import { renderReport } from "../../bench/src/report-table.js";
import { machineClass } from "../../bench/src/machine.js";
import { metricSumsBy } from "../../bench/src/metric-samples.js";
import { averageStep, countDecode, noSteps, stepsBetween, sumSteps } from "../../bench/src/step-times.js";
import { resultFileName, writeResults } from "../../bench/src/results-file.js";
import { runBench, type BenchOptions, type BenchReport } from "../../bench/src/run-bench.js";
import { SCENARIO_IDS } from "../../bench/src/scenario.js";
import { adapterNeeds, type BenchSizes } from "../../bench/src/sizes.js";
import { percentile, summarize } from "../../bench/src/stats.js";
import type { SwitchCost } from "../../bench/src/switch-cost.js";
import type { BenchShape } from "../../src/models/factory/bench-models.js";
import { tinyLlamaShape } from "../helpers/bench-shapes.js";

const tinySizes: BenchSizes = {
  warmup: 1,
  overheadTokens: 4,
  overheadPairs: 1,
  overheadTtftPairs: 1,
  floorSequential: 1,
  floorClients: 2,
  floorRequestsPerClient: 1,
  stageProbeRequests: 1,
  concurrencyLevels: [1, 2],
  concurrencyRounds: 1,
  concurrencyTokens: 4,
  switchCostTokens: 4,
  switchCostRounds: 1,
  adapterSpread: 1,
  coldAdapters: 1,
  memoryLevels: [1],
  scaleOutStreams: 2,
  scaleOutRounds: 1,
  scaleOutTokens: 4,
  imagePairs: 1,
  imageSize: 64,
  imageRounds: 1,
  // The load test's short form: all its streams, for a few seconds.
  loadStreams: 256,
  loadSeconds: 3,
  loadTokens: 8,
  // The fairness scenario's short form: a flood of 40, two probes.
  fairnessFlood: 40,
  fairnessProbes: 2,
  fairnessRounds: 1,
  batchingLevels: [1, 2],
  batchingRounds: 1,
  batchingTokens: 4,
  threadsRequests: 1,
  threadsTokens: 4,
  structuredRounds: 1,
  structuredTokens: 4,
  placementRounds: 1,
  placementWorkers: 2,
  placementAdapters: 3,
  placementStreams: 2,
  placementWarmup: 2,
  placementRequests: 6,
  placementTokens: 2,
  placementMaxAdapters: 2,
  cliRuns: 1,
  // Prompt caching's short form: two conversations of a system prompt the small shape's context holds.
  prefixConversations: 2,
  prefixRounds: 1,
  prefixSystemTokens: 48,
  prefixTokens: 2,
  prefixPlacementRounds: 1,
  prefixStreams: 2,
  prefixStreamRequests: 1,
  prefixStreamTokens: 2,
  prefixStreamRounds: 1,
  // Metering's cost: one round of each side, a request and a second of load each; the meter alone on 20 records.
  meteringRounds: 1,
  meteringOverheadRequests: 1,
  meteringLoadSeconds: 1,
  meteringProbeRecords: 20,
  batchLines: 4,
  batchTokens: 2,
  batchRounds: 1,
  batchInteractiveMs: 250,
  // Versus llama-server runs only with --versus (a llama-server binary no test machine has).
  versusLevels: [1],
  versusRounds: 1,
  versusTokens: 2,
};

const smallShape: BenchShape = { id: "bench-test-small", like: "nothing", shape: tinyLlamaShape };

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-bench-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const options = (overrides: Partial<BenchOptions>): BenchOptions => ({
  mode: "test",
  sizes: tinySizes,
  scenarios: SCENARIO_IDS,
  db: "pglite",
  postgresAdminUrl: process.env.HEARTH_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  modelsDir: path.join(root, "models"),
  large: false,
  shape: smallShape,
  worker: {
    threads: 1,
    contexts: 1,
    sequences: 2,
    adapterSequences: 1,
    adapterContexts: 2,
    concurrency: 2,
    expressSequences: 1,
    contextSize: 256,
    maxAdapters: 4,
  },
  progress: silentProgress,
  ...overrides,
});

function expectWellFormed(report: BenchReport) {
  expect(report.failures.map((f) => `${f.scenario}: ${f.error}`)).toEqual([]);
  for (const scenario of report.scenarios) {
    expect(scenario.figures.length, scenario.id).toBeGreaterThan(0);
    expect(scenario.targets.length, scenario.id).toBeGreaterThan(0);
    for (const f of scenario.figures)
      expect(Number.isFinite(f.value), `${scenario.id}: ${f.label} = ${f.value}`).toBe(true);
    for (const t of scenario.targets) {
      expect(Number.isFinite(t.measured), `${scenario.id}: ${t.label}`).toBe(true);
      expect(typeof t.pass).toBe("boolean");
    }
  }
}

describe("the bench", () => {
  it("runs every scenario against a real Hearth and reports figures, targets and the machine", async () => {
    const report = await runBench(options({}));
    expectWellFormed(report);
    expect(report.scenarios.map((s) => s.id)).toEqual([...SCENARIO_IDS]);
    // The load test's short form: 256 streams at once, and not one fails.
    const load = report.scenarios.find((s) => s.id === "load")!;
    expect(load.details.errors, load.notes.join("\n")).toBe(0);
    expect(load.details.completed).toBeGreaterThan(0);
    // The stage probe (Redis MONITOR) attributes its request to every stage.
    const floor = report.scenarios.find((s) => s.id === "floor")!;
    expect(floor.details.stages).toMatchObject({ requests: 1, attributed: 1 });
    // Fairness: the flood ends whole, and the steady account was timed alone and beside it.
    const fairness = report.scenarios.find((s) => s.id === "fairness")!;
    expect(fairness.figures.find((f) => f.label === "A's errors")?.value).toBe(0);
    expect((fairness.details.beside as number[]).length).toBeGreaterThan(0);
    // The switch cost: with two adapters in one context, every decode switched its adapter but
    // perhaps a run's first (the adapter the run before left set); with one, only a run's first may.
    const concurrency = report.scenarios.find((s) => s.id === "concurrency")!;
    const cost = concurrency.details.switchCost as SwitchCost;
    expect(cost.decodes.switching).toBeGreaterThan(tinySizes.switchCostRounds);
    expect(cost.switches.switching).toBeGreaterThanOrEqual(cost.decodes.switching - tinySizes.switchCostRounds);
    expect(cost.switches.steady).toBeLessThanOrEqual(tinySizes.switchCostRounds);
    // Batching also runs the step loop at every level (npm ci builds the batch sampler it needs).
    const batching = report.scenarios.find((s) => s.id === "batching")!;
    const loop = batching.details.stepLoop as { streams: number; tokensPerS: number }[];
    expect(loop.map((l) => l.streams)).toEqual(tinySizes.batchingLevels);
    expect(loop.every((l) => l.tokensPerS > 0)).toBe(true);
    // And where each side's step goes at each level: the decode, then the time until the next.
    const stepLabels = batching.figures.filter((f) => f.label.endsWith("a step, decode to decode"));
    expect(stepLabels.map((f) => f.label)).toEqual(
      tinySizes.batchingLevels.flatMap((n) => [
        `${n} streams, in-process: a step, decode to decode`,
        `${n} streams, Hearth: a step, decode to decode`,
      ]),
    );
    for (const f of stepLabels) {
      expect(f.display).toMatch(/sequences in [\d.]+ pass(es)?: decode .* ms, then .* \+ sampling .* \+ .* ms/);
    }
    // Prompt caching: the second conversation sharing a system prompt reuses the first's cells; one
    // with a nonce in front reuses a common chat header at most.
    const prefix = report.scenarios.find((s) => s.id === "prefix")!;
    const cached = prefix.details.cachedFraction as { one: number; unique: number };
    expect(cached.one).toBeGreaterThan(cached.unique);
    expect(report.targets.length).toBe(report.scenarios.reduce((n, s) => n + s.targets.length, 0));
    expect(report.machine.cores).toBeGreaterThan(0);
    expect(report.machine.nodeLlamaCpp).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.machine.llamaCpp.llamaCppRelease).not.toBe("");
    expect(report.settings.benchModel).toContain("bench-test-small");

    const table = renderReport(report);
    for (const scenario of report.scenarios) expect(table).toContain(scenario.title);
    expect(table).toMatch(/Targets met: \d+ of \d+\./);

    const files = await writeResults(path.join(root, "results"), report);
    const cls = machineClass(report.machine);
    expect(files.map((f) => path.basename(f))).toEqual(report.scenarios.map((s) => `${s.id}-${cls}.json`));
    const written = JSON.parse(await readFile(files[0]!, "utf8")) as BenchReport;
    expect(written.scenarios.map((s) => s.id)).toEqual([report.scenarios[0]!.id]);
    expect(written.targets.every((t) => t.scenario === report.scenarios[0]!.id)).toBe(true);
    const latest = JSON.parse(await readFile(path.join(root, "results", "latest.json"), "utf8")) as BenchReport;
    expect(latest.scenarios.map((s) => s.id)).toEqual(report.scenarios.map((s) => s.id));
    expect(latest.startedAt).toBe(report.startedAt);
  }, 600_000); // every scenario, structured output's grammar runs included: 200 s alone on 2 busy cores

  it("runs on PostgreSQL too", async () => {
    const report = await runBench(options({ db: "postgres", scenarios: ["floor"] }));
    expectWellFormed(report);
    expect(report.scenarios.map((s) => s.id)).toEqual(["floor"]);
    expect(report.settings.db).toBe("postgres");
  }, 120_000);
});

describe("the bench's HTTP client", () => {
  it("times the first token by the first event with text, events with an id: line included", async () => {
    const chunk = (text: string, extra = {}) =>
      JSON.stringify({ choices: [{ text, index: 0, finish_reason: null }], ...extra });
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: 1\ndata: ${chunk("Hel")}\n\n`);
      setTimeout(() => {
        res.write(`id: 2\ndata: ${chunk("lo")}\n\n`);
        res.write(`data: ${chunk("", { usage: { completion_tokens: 2 } })}\n\ndata: [DONE]\n\n`);
        res.end();
      }, 150);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = new BenchHttp(`http://127.0.0.1:${port}`, "key");
    try {
      const timing = await client.stream({ model: "m", prompt: "p" });
      expect(timing).toMatchObject({ tokens: 2, textChunks: 2 });
      expect(timing.totalMs - timing.ttftMs).toBeGreaterThanOrEqual(100);
    } finally {
      client.close();
      server.close();
    }
  });
});

describe("the bench's HTTP client on chat completions", () => {
  it("times the first token by the first delta with content, and reads the prompt and cached tokens", async () => {
    const chunk = (delta: object, extra = {}) =>
      JSON.stringify({ choices: [{ delta, index: 0, finish_reason: null }], ...extra });
    let route = "";
    const server = http.createServer((req, res) => {
      route = req.url ?? "";
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${chunk({ role: "assistant", content: "" })}\n\n`);
      setTimeout(() => {
        res.write(`data: ${chunk({ content: "Hi" })}\n\n`);
        const usage = { prompt_tokens: 40, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 32 } };
        res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
        res.end();
      }, 150);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = new BenchHttp(`http://127.0.0.1:${port}`, "key");
    try {
      const timing = await client.stream({ model: "m", messages: [] }, "/v1/chat/completions");
      expect(route).toBe("/v1/chat/completions");
      expect(timing).toMatchObject({ tokens: 1, textChunks: 1, promptTokens: 40, cachedTokens: 32 });
      expect(timing.ttftMs).toBeGreaterThanOrEqual(100);
    } finally {
      client.close();
      server.close();
    }
  });
});

describe("the bench's HTTP client's idle sockets", () => {
  it("closes a keep-alive socket itself once idle, before the server would, and goes on with a new one", async () => {
    // A socket the server closes as a request goes out on it fails that request (ECONNRESET).
    const server = http.createServer((_req, res) => res.end("{}"));
    server.keepAliveTimeout = 5_000;
    let open = 0;
    let opened = 0;
    server.on("connection", (socket) => {
      open++;
      opened++;
      socket.on("close", () => open--);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = new BenchHttp(`http://127.0.0.1:${port}`, "key", { idleMs: 300 });
    try {
      expect((await client.postJson("/", {})).status).toBe(200);
      expect(open).toBe(1);
      await eventually(async () => expect(open).toBe(0), 3_000);
      expect((await client.postJson("/", {})).status).toBe(200);
      expect(opened).toBe(2);
    } finally {
      client.close();
      server.close();
    }
  });
});

describe("bench results", () => {
  it("name the class of machine by its backends and cores", () => {
    expect(machineClass({ cores: 2 })).toBe("cpu-2cores");
    expect(machineClass({ cores: 2, backends: { cpu: 1 } })).toBe("cpu-2cores");
    expect(machineClass({ cores: 16, backends: { cuda: 1 } })).toBe("cuda-16cores");
  });
});

describe("bench metrics", () => {
  it("sums a metric's samples by one label", () => {
    const text = [
      "# HELP hearth_worker_prompt_cache_lookups_total Requests that took a sequence.",
      'hearth_worker_prompt_cache_lookups_total{model="m",worker="w1"} 3',
      'hearth_worker_prompt_cache_lookups_total{model="n",worker="w1"} 2',
      'hearth_worker_prompt_cache_lookups_total{model="m",worker="w2"} 1',
      'hearth_worker_prompt_cache_lookups_total_other{worker="w3"} 9',
    ].join("\n");
    expect(metricSumsBy(text, "hearth_worker_prompt_cache_lookups_total", "worker")).toEqual({ w1: 5, w2: 1 });
    expect(metricSumsBy(text, "hearth_worker_prompt_cache_lookups_total", "model")).toEqual({ m: 4, n: 2 });
  });
});

describe("bench steps", () => {
  it("count a context's generation steps, and average the time between them by part", () => {
    const times = noSteps();
    countDecode(times, { tokens: 8, sequences: 2, ms: 9 }); // a prompt batch: not a step
    countDecode(times, { tokens: 2, sequences: 2, ms: 3 }); // a step after it: nothing between
    countDecode(times, {
      tokens: 2,
      sequences: 2,
      ms: 5,
      between: { beforeSamplingMs: 0.5, samplingMs: 1, afterSamplingMs: 1.5 },
    });
    countDecode(times, { tokens: 2, sequences: 2, ms: 4, passes: 2 }); // its IDs apart: two passes
    expect(times).toMatchObject({ steps: 3, sequences: 6, passes: 4, followed: 1 });
    const step = averageStep(times)!;
    expect(step.sequences).toBe(2);
    expect(step.passes).toBeCloseTo(4 / 3);
    expect(step.decodeMs).toBeCloseTo(4);
    expect([step.beforeSamplingMs, step.samplingMs, step.afterSamplingMs]).toEqual([0.5, 1, 1.5]);
    expect(step.totalMs).toBeCloseTo(7);
    // Readings of counters: the difference of two, the sum of several.
    const later = sumSteps([times, times]);
    expect(stepsBetween(times, later)).toEqual(times);
    expect(averageStep(noSteps())).toBeUndefined();
  });
});

describe("bench result files", () => {
  it("are named by scenario and machine class, the large shape's apart", () => {
    const run = (large: boolean) =>
      ({ machine: { backends: { cuda: 1 }, cores: 16 }, settings: { large } }) as unknown as BenchReport;
    expect(resultFileName("batching", run(false))).toBe("batching-cuda-16cores.json");
    expect(resultFileName("batching", run(true))).toBe("batching-cuda-16cores-large.json");
  });
});

describe("bench sizes and statistics", () => {
  it("counts the adapters a run needs", () => {
    expect(adapterNeeds(tinySizes)).toEqual({ deployed: 3, cold: 1 });
    expect(adapterNeeds(tinySizes, ["memory", "cold-adapter"])).toEqual({ deployed: 1, cold: 1 });
    expect(adapterNeeds(tinySizes, ["floor"])).toEqual({ deployed: 0, cold: 0 });
    // Two at least for concurrency: its switch cost shares a context between two adapters.
    expect(adapterNeeds(tinySizes, ["concurrency"])).toEqual({ deployed: 2, cold: 0 });
    expect(adapterNeeds({ ...tinySizes, adapterSpread: 8, memoryLevels: [1, 8, 32], coldAdapters: 3 })).toEqual({
      deployed: 32,
      cold: 3,
    });
    expect(adapterNeeds({ ...tinySizes, placementAdapters: 50 }, ["placement"])).toEqual({ deployed: 50, cold: 0 });
  });

  it("interpolates percentiles between ranks", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([5], 99)).toBe(5);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
    expect(summarize([3, 1, 2])).toMatchObject({ n: 3, p50: 2, min: 1, max: 3, mean: 2 });
  });
});
