import type { ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../src/logger.js";
import { buildBenchModels, type BenchShape } from "../../src/models/factory/bench-models.js";
import { buildDemoModels, HEARTH_TINY_ID, HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { answers, startLocalRedis } from "../../src/process/local-redis.js";
import { AdapterDeployments } from "./adapter-deployments.js";
import { allInOneContext, HearthCluster, type WorkerSettings } from "./hearth-cluster.js";
import { BenchHttp } from "./http-client.js";
import { InProcessModel } from "./in-process.js";
import { describeMachine, type MachineInfo } from "./machine.js";
import type { Progress } from "./progress.js";
import {
  ALL_SCENARIO_IDS,
  type BenchContext,
  type Scenario,
  type ScenarioId,
  type ScenarioResult,
  type TargetCheck,
} from "./scenario.js";
import { coldAdapterScenario } from "./scenarios/cold-adapter.js";
import { concurrencyScenario } from "./scenarios/concurrency.js";
import { floorScenario } from "./scenarios/floor.js";
import { memoryScenario } from "./scenarios/memory.js";
import { overheadScenario } from "./scenarios/overhead.js";
import { scaleOutScenario } from "./scenarios/scale-out.js";
import { imagesScenario } from "./scenarios/images.js";
import { fairnessScenario } from "./scenarios/fairness.js";
import { loadScenario } from "./scenarios/load.js";
import { batchingScenario } from "./scenarios/batching.js";
import { threadsScenario } from "./scenarios/threads.js";
import { placementScenario } from "./scenarios/placement.js";
import { structuredScenario } from "./scenarios/structured.js";
import { cliScenario } from "./scenarios/cli.js";
import { prefixScenario } from "./scenarios/prefix.js";
import { meteringScenario } from "./scenarios/metering.js";
import { batchScenario } from "./scenarios/batch.js";
import { versusScenario } from "./scenarios/versus.js";
import { adapterNeeds, type BenchSizes } from "./sizes.js";

export interface BenchOptions {
  mode: string;
  sizes: BenchSizes;
  scenarios: readonly ScenarioId[];
  db: "pglite" | "postgres";
  postgresAdminUrl: string;
  redisUrl: string;
  /** Where the benchmark models are built (and kept between runs), next to hearth-tiny. */
  modelsDir: string;
  /** The 1B-class shape instead of the SmolLM-135M one. */
  large: boolean;
  /** Any other shape (tests use a small one). */
  shape?: BenchShape;
  worker: WorkerSettings;
  /** Write CPU profiles of the API and worker processes here. */
  profileDir?: string;
  /** The llama-server binary of the versus scenario. */
  llamaServer?: string;
  progress: Progress;
}

export interface BenchReport {
  version: 1;
  mode: string;
  startedAt: string;
  durationS: number;
  machine: MachineInfo;
  settings: {
    db: string;
    benchModel: string;
    /** The large shape (--large): its results are kept apart from the default shape's. */
    large?: boolean;
    worker: WorkerSettings;
    sizes: BenchSizes;
    scenarios: ScenarioId[];
    profileDir: string | null;
  };
  scenarios: ScenarioResult[];
  targets: (TargetCheck & { scenario: ScenarioId })[];
  failures: { scenario: ScenarioId; error: string }[];
  /** The Hearth processes the run started (roles of the CPU profiles). */
  processes: { role: string; pid: number; startedAt: number; readyAt?: number }[];
  /** Wall clock (ms) when the first scenario began: CPU profiles are read from then on. */
  measuredFrom: number | null;
}

const scenarios: Record<ScenarioId, Scenario> = {
  overhead: overheadScenario,
  floor: floorScenario,
  concurrency: concurrencyScenario,
  "cold-adapter": coldAdapterScenario,
  memory: memoryScenario,
  "scale-out": scaleOutScenario,
  images: imagesScenario,
  load: loadScenario,
  fairness: fairnessScenario,
  batching: batchingScenario,
  threads: threadsScenario,
  placement: placementScenario,
  structured: structuredScenario,
  cli: cliScenario,
  prefix: prefixScenario,
  metering: meteringScenario,
  batch: batchScenario,
  versus: versusScenario,
};

const PROMPT = "The quick brown fox jumps over the lazy dog.";

/** Builds the models, starts Hearth, runs the chosen scenarios in order, and tears everything down. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const { sizes, progress } = options;
  const chosen = ALL_SCENARIO_IDS.filter((id) => options.scenarios.includes(id));
  const { deployed: deployedCount, cold: coldCount } = adapterNeeds(sizes, chosen);

  progress.step("building the benchmark models (kept for the next run)");
  const models = await buildBenchModels(options.modelsDir, {
    adapters: deployedCount + coldCount,
    large: options.large,
    shape: options.shape,
  });
  const demo = await buildDemoModels(options.modelsDir);
  const redis = await ensureRedis(options.redisUrl, progress);
  const machine = await describeMachine(options.redisUrl);

  progress.step("starting Hearth (API and worker processes)");
  const profileArgs = options.profileDir
    ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(options.profileDir)]
    : undefined;
  const cluster = await HearthCluster.start({
    modelDir: models.dir,
    serveModels: [models.baseModelId, HEARTH_TINY_ID],
    db: options.db,
    postgresAdminUrl: options.postgresAdminUrl,
    redisUrl: options.redisUrl,
    workers: 1,
    worker: options.worker,
    nodeArgs: profileArgs && { api: profileArgs, worker: profileArgs },
  });
  const http = new BenchHttp(cluster.url, cluster.apiKey);
  machine.backends = ((await http.getJson("/readyz", false)).body as { backends?: Record<string, number> }).backends;
  let inProcess: Promise<InProcessModel> | undefined;
  const results: ScenarioResult[] = [];
  const failures: BenchReport["failures"] = [];
  let measuredFrom: number | null = null;
  try {
    const deployments = new AdapterDeployments(cluster.url, cluster.apiKey);
    const adapters: string[] = [];
    const coldAdapters: BenchContext["coldAdapters"] = [];
    let ready = 0;
    // Four at a time: setting up is not measured, and one at a time takes a while.
    await forEachLimited(models.adapterDirs, 4, async (dir, i) => {
      const modelId = `bench-lora-${i}`;
      const name = await deployments.upload(modelId, dir);
      if (i < deployedCount) await deployments.deploy(modelId);
      progress.step(
        `adapters: ${++ready}/${models.adapterDirs.length} uploaded and validated (${deployedCount} deployed)`,
      );
      if (i < deployedCount) adapters[i] = name;
      else coldAdapters[i - deployedCount] = { modelId, name };
    });
    const ctx: BenchContext = {
      cluster,
      http,
      deployments,
      sizes,
      progress,
      bench: { name: models.baseModelRef, path: models.baseModel },
      tiny: { name: HEARTH_TINY_REF, path: demo.baseModel },
      llamaServer: options.llamaServer,
      adapters,
      coldAdapters,
      workerSettings: options.worker,
      backends: machine.backends ?? {},
      inProcess: () => (inProcess ??= InProcessModel.load(models.baseModel, allInOneContext(options.worker))),
      prompt: PROMPT,
    };
    measuredFrom = Date.now();
    for (const id of chosen) {
      const began = performance.now();
      try {
        if (cluster.workerPids.length !== 1 || cluster.workerSettings !== options.worker)
          await cluster.setWorkers(1, options.worker);
        const result = await scenarios[id](ctx);
        result.durationS = (performance.now() - began) / 1000;
        results.push(result);
        const missed = result.targets.filter((t) => !t.pass).length;
        progress.note(`${id}: done in ${result.durationS.toFixed(0)} s${missed ? `, ${missed} target(s) missed` : ""}`);
      } catch (error) {
        failures.push({ scenario: id, error: (error as Error).stack ?? String(error) });
        progress.note(`${id}: FAILED: ${(error as Error).message}`);
      }
    }
  } finally {
    progress.step("stopping Hearth");
    http.close();
    await (await inProcess?.catch(() => undefined))?.dispose();
    await cluster.close();
    if (redis && redis.exitCode === null) redis.kill("SIGTERM");
    progress.done();
  }
  machine.loadAverageAfter = os.loadavg().map((l) => Number(l.toFixed(2)));
  return {
    version: 1,
    mode: options.mode,
    startedAt,
    durationS: (performance.now() - started) / 1000,
    machine,
    settings: {
      db: options.db,
      benchModel: `${models.baseModelRef} (${path.basename(models.baseModel)})`,
      large: options.large,
      worker: options.worker,
      sizes,
      scenarios: chosen,
      profileDir: options.profileDir ?? null,
    },
    scenarios: results,
    targets: results.flatMap((r) => r.targets.map((t) => ({ scenario: r.id, ...t }))),
    failures,
    processes: cluster.processes,
    measuredFrom,
  };
}

async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Starts a local redis-server, as `npm start` does, when none answers at the default address. */
async function ensureRedis(url: string, progress: Progress): Promise<ChildProcess | undefined> {
  const at = new URL(url);
  const port = Number(at.port) || 6379;
  if (await answers(at.hostname, port)) return undefined;
  if (at.hostname !== "127.0.0.1" && at.hostname !== "localhost") throw new Error(`Nothing answers at ${url}.`);
  progress.step("starting a local redis-server");
  const child = await startLocalRedis({
    dataDir: path.join(os.tmpdir(), "hearth-bench-redis"),
    port,
    log: createLogger("warn", "bench"),
  });
  if (!child) throw new Error(`Redis is needed at ${url}.`);
  return child;
}
