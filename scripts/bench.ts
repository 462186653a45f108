/**
 * Hearth's benchmark: runs Hearth for real (API and worker processes, Redis, PGlite or
 * PostgreSQL) on a random-weight model of a real shape and measures nine scenarios
 * against the targets in docs/performance.md.
 *
 *   npm run bench -- [--quick] [--scenarios overhead,floor,...] [--db pglite|postgres] [--large]
 *                    [--threads N] [--models-dir DIR] [--out DIR] [--profile DIR] [--no-progress]
 *                    [--versus llama-server=PATH]
 *
 * Prints a table and writes bench/results/<scenario>-<machine class>.json for each scenario run
 * (the latest result per scenario and class of machine) and latest.json (the whole run).
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { renderProfiles, summarizeProfiles } from "../bench/src/cpu-profile.js";
import { createProgress, silentProgress } from "../bench/src/progress.js";
import { renderReport } from "../bench/src/report-table.js";
import { writeResults } from "../bench/src/results-file.js";
import { runBench } from "../bench/src/run-bench.js";
import { llamaServerBinary } from "../bench/src/llama-server.js";
import { ALL_SCENARIO_IDS, SCENARIO_IDS, type ScenarioId } from "../bench/src/scenario.js";
import { fullSizes, quickSizes } from "../bench/src/sizes.js";

const usage = `usage: npm run bench -- [options]
  --quick                 fewer repetitions and shorter streams (bench/src/sizes.ts); default: the full run
  --scenarios LIST        comma-separated, of: ${ALL_SCENARIO_IDS.join(", ")}
                          (default: all but versus, and versus too when --versus is given)
  --db pglite|postgres    the API's database (default pglite; postgres: a fresh database on --postgres-url)
  --postgres-url URL      admin URL of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
  --large                 the Llama-3.2-1B shape (about 1.3 GB) instead of SmolLM-135M
  --threads N             llama.cpp threads per worker context (default: Hearth's, HEARTH_WORKER_THREADS)
  --sequences N           sequences of each of the base model's llama.cpp contexts (default 16)
  --contexts N            contexts of the base model (HEARTH_CONTEXTS_PER_MODEL, default 1); requests go to
                          the least busy, and each context samples beside the others
  --adapter-contexts N    contexts the adapters share (default: Hearth's, HEARTH_ADAPTER_CONTEXTS)
  --adapter-sequences N   sequences of each adapter context (default: --sequences ÷ --adapter-contexts, so
                          that the adapters have as many sequences as the base model)
  --worker-concurrency N  jobs one worker takes at once (default 16)
  --models-dir DIR        where the benchmark models are built and kept (default <HEARTH_DATA_DIR>/bench-models)
  --out DIR               results directory (default bench/results)
  --profile DIR           write CPU profiles (node --cpu-prof) of the API and worker processes to DIR
  --versus llama-server=PATH
                          adds the scenario versus: llama.cpp's own server (that binary) beside Hearth on
                          hearth-tiny, the same threads and slots (how to build it: docs/bench-versus.md)
  --no-progress           no progress line`;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    scenarios: { type: "string" },
    db: { type: "string", default: "pglite" },
    "postgres-url": { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    large: { type: "boolean", default: false },
    threads: { type: "string" },
    sequences: { type: "string", default: "16" },
    contexts: { type: "string", default: "1" },
    "adapter-sequences": { type: "string" },
    "adapter-contexts": { type: "string" },
    "worker-concurrency": { type: "string", default: "16" },
    "models-dir": { type: "string" },
    out: { type: "string", default: "bench/results" },
    profile: { type: "string" },
    versus: { type: "string" },
    "no-progress": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(usage);
  process.exit(0);
}
const fail = (message: string): never => {
  console.error(`${message}\n${usage}`);
  process.exit(2);
};

const versus = values.versus === undefined ? undefined : llamaServerBinary(values.versus);
if (versus && "error" in versus) fail(versus.error);
const llamaServer = versus && "path" in versus ? versus.path : undefined;
const scenarios = (values.scenarios
  ?.split(",")
  .map((s) => s.trim())
  .filter(Boolean) ?? [...SCENARIO_IDS, ...(llamaServer ? (["versus"] as const) : [])]) as ScenarioId[];
for (const id of scenarios) if (!ALL_SCENARIO_IDS.includes(id)) fail(`unknown scenario ${JSON.stringify(id)}`);
if (scenarios.includes("versus") && !llamaServer) fail("the scenario versus needs --versus llama-server=PATH");
if (values.db !== "pglite" && values.db !== "postgres") fail(`--db must be pglite or postgres, not ${values.db}`);
const wholeNumber = (option: string, value: string, max: number) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${option} must be a whole number from 1 to ${max}`);
  return n;
};
const config = loadConfig(process.env);
const threads = values.threads === undefined ? config.worker.threads : wholeNumber("threads", values.threads, 256);
const sequences = wholeNumber("sequences", values.sequences, 64);
const contexts = wholeNumber("contexts", values.contexts, 16);
const adapterContexts =
  values["adapter-contexts"] === undefined
    ? config.worker.adapterContexts
    : wholeNumber("adapter-contexts", values["adapter-contexts"], 16);
const adapterSequences =
  values["adapter-sequences"] === undefined
    ? Math.max(1, Math.ceil(sequences / adapterContexts))
    : wholeNumber("adapter-sequences", values["adapter-sequences"], 64);
const concurrency = wholeNumber("worker-concurrency", values["worker-concurrency"], 64);

const sizes = values.quick ? quickSizes : fullSizes;
const report = await runBench({
  mode: values.quick ? "quick" : "full",
  sizes,
  scenarios,
  db: values.db as "pglite" | "postgres",
  postgresAdminUrl: values["postgres-url"],
  redisUrl: config.redisUrl,
  modelsDir: path.resolve(values["models-dir"] ?? path.join(config.dataDir, "bench-models")),
  large: values.large,
  worker: {
    threads,
    contexts,
    sequences,
    adapterSequences,
    adapterContexts,
    concurrency,
    expressSequences: config.worker.expressSequences,
    contextSize: 256,
    maxAdapters: Math.max(...sizes.memoryLevels, sizes.adapterSpread) + sizes.coldAdapters,
  },
  profileDir: values.profile,
  llamaServer,
  progress: values["no-progress"] ? silentProgress : createProgress(),
});
console.log(renderReport(report));
const files = await writeResults(path.resolve(values.out), report);
console.log(`\nResults: ${files.map((f) => path.relative(process.cwd(), f)).join(", ")} (and latest.json)`);
if (values.profile) {
  // Profiles are read from the first scenario on (or from the process's readiness, if later).
  const started = new Map(report.processes.map((p) => [p.pid, p]));
  const skipMs = (pid: number) => {
    const p = started.get(pid);
    return p && Math.max(p.readyAt ?? p.startedAt, report.measuredFrom ?? 0) - p.startedAt;
  };
  const roles = new Map(report.processes.map((p) => [p.pid, p.role]));
  console.log(
    `\nCPU profiles in ${values.profile}, from the first scenario on:${renderProfiles(await summarizeProfiles(values.profile, skipMs), roles)}`,
  );
}
process.exit(report.failures.length > 0 ? 1 : 0);
