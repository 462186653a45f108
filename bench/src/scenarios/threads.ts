import { spawn, type ChildProcess } from "node:child_process";
import { usableCores } from "../../../src/process/usable-cores.js";
import { metricSamples } from "../metric-samples.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

type Condition = "quiet" | "busy";

interface Run {
  threads: number;
  condition: Condition;
  tokensPerS: number;
  ttftP50: number;
  /** The worker's hearth_worker_cpu_oversubscribed after the run (0 or 1). */
  flagged: number;
  /** Its hearth_worker_decode_slowdown_ratio after the run. */
  slowdown: number;
}

/** Busy tokens/s under this share of quiet is a collapse, which the worker must report. */
const COLLAPSE = 0.5;
const HEARTBEAT_WAIT_MS = 2_300;

/**
 * 9. Threads against the machine: for each llama.cpp thread count from 1 to the cores the
 * bench may use, a fresh worker streams one request after another on a quiet machine, then
 * with one core kept busy by a process the bench starts (another tenant of a small VM). The
 * targets: Hearth's default thread count, in its worse condition, does within 10 % of the
 * count whose worse condition is best (a default must not collapse when the machine gets
 * busy; what it gives up on a quiet machine is shown beside), and a worker whose decoding
 * collapses under the load says so on /metrics (and one that does not collapse, does not).
 */
export async function threadsScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const cores = usableCores();
  const defaultThreads = Math.max(1, cores - 1);
  const counts = [...new Set([1, defaultThreads, cores])].sort((a, b) => a - b);
  const body = { model: ctx.bench.name, prompt: ctx.prompt, max_tokens: sizes.threadsTokens, temperature: 0 };
  const modelId = ctx.bench.name.split("/").pop()!;
  const runs: Run[] = [];
  try {
    for (const threads of counts) {
      progress.step(`threads: a worker with ${threads} thread(s)`);
      await ctx.cluster.setWorkers(1, { ...ctx.workerSettings, threads });
      for (let i = 0; i < sizes.warmup; i++) await ctx.http.stream(body);
      for (const condition of ["quiet", "busy"] as const) {
        progress.step(`threads: ${threads} thread(s), ${condition}`);
        const load = condition === "busy" ? busyCore() : undefined;
        try {
          const timings = [];
          for (let i = 0; i < sizes.threadsRequests; i++) timings.push(await ctx.http.stream(body));
          const tokens = timings.reduce((sum, t) => sum + t.tokens, 0);
          const ms = timings.reduce((sum, t) => sum + t.totalMs, 0);
          await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_WAIT_MS));
          const gauges = await workerGauges(ctx, modelId);
          runs.push({
            threads,
            condition,
            tokensPerS: (tokens / ms) * 1000,
            ttftP50: summarize(timings.map((t) => t.ttftMs)).p50,
            ...gauges,
          });
        } finally {
          load?.kill("SIGKILL");
        }
      }
    }
  } finally {
    await ctx.cluster.setWorkers(1, ctx.workerSettings);
  }

  const figures: Figure[] = runs.map((r) =>
    figure(
      `${r.threads} thread(s), ${r.condition}: tokens/s (TTFT p50; slowdown, reported)`,
      round(r.tokensPerS),
      "tok/s",
      `${round(r.tokensPerS)} tok/s (${round(r.ttftP50)} ms; ${round(r.slowdown)} ×, ${r.flagged ? "oversubscribed" : "ok"})`,
    ),
  );
  // Each count's worst case (quiet or busy); the default must do nearly as well there as the best count does.
  const worstOf = (threads: number) => Math.min(...runs.filter((r) => r.threads === threads).map((r) => r.tokensPerS));
  const bestWorst = Math.max(...counts.map(worstOf));
  const quietBest = Math.max(...runs.filter((r) => r.condition === "quiet").map((r) => r.tokensPerS));
  const quietDefault = runs.find((r) => r.condition === "quiet" && r.threads === defaultThreads)!.tokensPerS;
  figures.push(
    figure(`default threads (${defaultThreads}), quiet ÷ the best count quiet`, round(quietDefault / quietBest), "×"),
  );
  let misreported = 0;
  for (const busy of runs.filter((r) => r.condition === "busy")) {
    const quiet = runs.find((r) => r.condition === "quiet" && r.threads === busy.threads)!;
    const collapsed = busy.tokensPerS < quiet.tokensPerS * COLLAPSE;
    if (collapsed !== (busy.flagged === 1) || quiet.flagged === 1) misreported++;
  }
  return {
    id: "threads",
    title: `Threads against the machine: 1 stream of ${sizes.threadsTokens} tokens, quiet and with one core busy`,
    figures,
    targets: [
      target(
        `default threads (${defaultThreads}): worst of quiet and busy ÷ the best count's worst`,
        round(worstOf(defaultThreads) / bestWorst),
        ">=",
        0.9,
        "×",
      ),
      target(
        `runs whose collapse (busy < ${COLLAPSE * 100} % of quiet) /metrics misreported`,
        misreported,
        "<=",
        0,
        "runs",
      ),
    ],
    notes: [
      `${cores} usable core(s); ${sizes.threadsRequests} requests one after another per run; the busy core is a ` +
        "process spinning in a loop, started by the bench; a fresh worker for each thread count",
    ],
    details: { cores, defaultThreads, runs },
  };
}

/** A process that keeps one core busy until killed. */
function busyCore(): ChildProcess {
  return spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
}

/** The worker's oversubscription gauges for `modelId`, from the API's /metrics. */
async function workerGauges(ctx: BenchContext, modelId: string): Promise<{ flagged: number; slowdown: number }> {
  const text = await ctx.http.getText("/metrics");
  const read = (name: string) => Math.max(0, ...metricSamples(text, name, { model: modelId }));
  return { flagged: read("hearth_worker_cpu_oversubscribed"), slowdown: read("hearth_worker_decode_slowdown_ratio") };
}
