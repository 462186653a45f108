import os from "node:os";
import type { StreamTiming } from "../http-client.js";
import { runClients } from "../load.js";
import { cpuSeconds } from "../process-stats.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

interface Layout {
  workers: number;
  threads: number;
}

interface LayoutRun extends Layout {
  tokensPerS: number;
  ttftP50: number;
  wallMs: number;
  /** CPU seconds each worker used during the run (shows how the jobs were shared). */
  workerCpuS: number[];
}

/**
 * 6. Scale-out: aggregate tokens/s of N concurrent streams on the base model with one
 * worker process and with two. llama.cpp threads are matched to the cores: one worker
 * is tried with all of them and with half (the better one is the baseline), two workers
 * get half each.
 */
export async function scaleOutScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const cores = os.availableParallelism();
  const half = Math.max(1, Math.floor(cores / 2));
  const layouts: Layout[] = [
    { workers: 1, threads: half },
    ...(cores > 1 ? [{ workers: 1, threads: cores }] : []),
    { workers: 2, threads: half },
  ];
  const body = { model: ctx.bench.name, prompt: ctx.prompt, max_tokens: sizes.scaleOutTokens, temperature: 0 };
  const runs: LayoutRun[] = [];
  for (const layout of layouts) {
    const label = `${layout.workers} worker(s) × ${layout.threads} thread(s)`;
    progress.step(`scale-out: starting ${label}`);
    await ctx.cluster.setWorkers(layout.workers, { ...ctx.workerSettings, threads: layout.threads });
    await runClients(Math.max(2, layout.workers * 2), 1, () => ctx.http.stream({ ...body, max_tokens: 2 }));
    progress.step(`scale-out: ${sizes.scaleOutStreams} streams on ${label}`);
    const pids = ctx.cluster.workerPids;
    const cpuBefore = await Promise.all(pids.map(cpuSeconds));
    const { results, wallMs } = await runClients<StreamTiming>(sizes.scaleOutStreams, sizes.scaleOutRounds, () =>
      ctx.http.stream(body),
    );
    const cpuAfter = await Promise.all(pids.map(cpuSeconds));
    const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
    runs.push({
      ...layout,
      tokensPerS: (tokens / wallMs) * 1000,
      ttftP50: summarize(results.map((r) => r.ttftMs)).p50,
      wallMs,
      workerCpuS: cpuAfter.map((after, i) => after - cpuBefore[i]!),
    });
  }
  await ctx.cluster.setWorkers(1, ctx.workerSettings);

  const single = runs.filter((r) => r.workers === 1);
  const baseline = single.reduce((best, r) => (r.tokensPerS > best.tokensPerS ? r : best));
  const two = runs.find((r) => r.workers === 2)!;
  const ratio = two.tokensPerS / baseline.tokensPerS;
  return {
    id: "scale-out",
    title: `Scale-out: ${sizes.scaleOutStreams} concurrent streams of ${sizes.scaleOutTokens} tokens on the base model`,
    figures: [
      ...runs.map((r) =>
        figure(
          `${r.workers} worker(s) × ${r.threads} thread(s): tokens/s`,
          round(r.tokensPerS),
          "tok/s",
          `${round(r.tokensPerS)} tok/s (TTFT p50 ${round(r.ttftP50)} ms; worker CPU ${r.workerCpuS.map((s) => round(s)).join(" + ")} s)`,
        ),
      ),
      figure("2 workers ÷ best single worker", round(ratio), "×"),
    ],
    targets: [
      target(
        `2 workers ÷ 1 worker (${baseline.threads} thread(s)) at ${sizes.scaleOutStreams} streams`,
        round(ratio),
        ">=",
        1.6,
        "×",
      ),
    ],
    notes: [
      `${cores} cores; the API, Redis and this client share them with the workers; ` +
        `${sizes.scaleOutRounds} request(s) per stream; each worker takes up to ${ctx.workerSettings.concurrency} jobs`,
    ],
    details: { cores, runs, baseline: { workers: baseline.workers, threads: baseline.threads } },
  };
}
