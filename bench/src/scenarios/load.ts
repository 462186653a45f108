import { streamFor } from "../load.js";
import { residentBytes } from "../process-stats.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

/**
 * 8. Load: `loadStreams` clients, each streaming completions from hearth-tiny one after the
 * other for `loadSeconds`, through the one API and worker. Every request must end whole
 * (zero errors); the API's and the workers' resident memory are sampled all along (their
 * peaks, against what they held before, show whether memory stays bounded), and the time to
 * first token is the whole path's under a queue that never empties.
 */
export async function loadScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress, cluster } = ctx;
  const body = { model: ctx.tiny.name, prompt: ctx.prompt, max_tokens: sizes.loadTokens, temperature: 0 };
  const pids = { api: cluster.apiPid, workers: cluster.workerPids };
  const rss = async () => ({
    api: await residentBytes(pids.api),
    workers: Math.max(...(await Promise.all(pids.workers.map(residentBytes)))),
  });
  const before = await rss();
  const peak = { ...before };
  const sampler = setInterval(() => {
    void rss().then(
      (now) => {
        peak.api = Math.max(peak.api, now.api);
        peak.workers = Math.max(peak.workers, now.workers);
      },
      () => {},
    );
  }, 250);

  progress.step(`load: ${sizes.loadStreams} streams of ${sizes.loadTokens} tokens for ${sizes.loadSeconds} s`);
  const { timings, errors, wallMs } = await streamFor(ctx.http, body, sizes.loadStreams, sizes.loadSeconds).finally(
    () => clearInterval(sampler),
  );
  const ttfts = timings.map((t) => t.ttftMs);
  const ttft = summarize(ttfts);
  const mb = (bytes: number) => round(bytes / 2 ** 20);
  const distinctErrors = [...new Set(errors)].slice(0, 5);
  return {
    id: "load",
    title: `Load: ${sizes.loadStreams} concurrent streams on hearth-tiny for ${sizes.loadSeconds} s`,
    figures: [
      figure(
        "requests completed",
        ttfts.length,
        "requests",
        `${ttfts.length} (${round((ttfts.length / wallMs) * 1000)}/s)`,
      ),
      figure("errors", errors.length, "requests"),
      figure("time to first token p50 / p99", round(ttft.p99), "ms", `${round(ttft.p50)} / ${round(ttft.p99)} ms`),
      figure("API memory peak (before)", mb(peak.api), "MB", `${mb(peak.api)} MB (${mb(before.api)} MB)`),
      figure(
        "worker memory peak (before)",
        mb(peak.workers),
        "MB",
        `${mb(peak.workers)} MB (${mb(before.workers)} MB)`,
      ),
    ],
    targets: [target("errors under load", errors.length, "<=", 0, "requests")],
    notes: [
      `${pids.workers.length} worker(s), each taking up to ${ctx.workerSettings.concurrency} jobs; ` +
        "the rest wait in the queue. Memory is resident set size, sampled every 250 ms.",
      ...distinctErrors.map((e) => `error: ${e}`),
    ],
    details: { wallMs, completed: ttfts.length, errors: errors.length, distinctErrors, ttft, before, peak },
  };
}
