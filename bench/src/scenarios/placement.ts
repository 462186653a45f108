import { seededRandom } from "../../../src/images/seeded-random.js";
import type { StreamTiming } from "../http-client.js";
import { metricSamples, metricsAfterHeartbeat, sumOf } from "../metric-samples.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

/** The popularity of the adapters: adapter k (from 1) is asked in proportion to k^-s. */
const ZIPF_S = 1.1;
/** Fixed, so that both runs ask the same adapters in the same order. */
const SEED = 20261125;

interface Counters {
  adapterLoads: number;
  placements: Record<string, number>;
  moves: number;
}

/** One run: fresh workers, the warm-up, then the measured requests. */
interface Run {
  placement: Mode;
  round: number;
  requests: number;
  coldLoads: number;
  ttftMs: number[];
  tokens: number;
  wallMs: number;
  /** Where placement sent the measured requests (reason → requests), and how many moved to the shared queue. */
  placements: Record<string, number>;
  moves: number;
}

/** The runs of one mode, pooled. */
interface Pooled {
  placement: Mode;
  requests: number;
  coldLoads: number;
  coldLoadsPer1000: number;
  warmHitRate: number;
  ttftP50: number;
  ttftP99: number;
  tokensPerS: number;
  placements: Record<string, number>;
  moves: number;
}

type Mode = "off" | "on";

/**
 * 12. Adapter-aware placement: several worker processes, many deployed adapters asked with
 * Zipf popularity, with placement off (any worker takes any request) and on, alternating for
 * `placementRounds` rounds (the machine's load drifts; each mode's runs are pooled). Every run
 * has fresh workers and the same request sequence: a warm-up, then the measured requests. A cold
 * load is an adapter load a worker reports (its adapter-load histogram's count); the warm-hit
 * rate is 1 − cold loads ÷ requests. Each worker keeps `placementMaxAdapters` adapters, fewer
 * than there are, as a fleet whose memory holds every adapter only once they are split between
 * workers.
 */
export async function placementScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const adapters = ctx.adapters.slice(0, sizes.placementAdapters);
  if (adapters.length < sizes.placementAdapters) {
    throw new Error(`the placement scenario needs ${sizes.placementAdapters} deployed adapters`);
  }
  const sequence = zipfSequence(adapters.length, sizes.placementWarmup + sizes.placementRequests);
  const settings = { ...ctx.workerSettings, threads: 1, maxAdapters: sizes.placementMaxAdapters };
  const ask = (i: number) =>
    ctx.http.stream({
      model: adapters[sequence[i]!]!,
      prompt: ctx.prompt,
      max_tokens: sizes.placementTokens,
      temperature: 0,
    });
  const runs: Run[] = [];
  try {
    for (let round = 1; round <= sizes.placementRounds; round++) {
      for (const placement of ["off", "on"] as const) {
        const label = `placement ${placement} (round ${round}/${sizes.placementRounds})`;
        progress.step(`${label}: starting the API and ${sizes.placementWorkers} fresh workers`);
        await ctx.cluster.restartApi({ HEARTH_PLACEMENT: placement === "on" ? "true" : "false" });
        await ctx.cluster.setWorkers(sizes.placementWorkers, settings);
        progress.step(`${label}: ${sizes.placementWarmup} warm-up requests`);
        await drive(sizes.placementStreams, 0, sizes.placementWarmup, ask);
        const before = await counters(ctx);
        progress.step(`${label}: ${sizes.placementRequests} requests on ${sizes.placementStreams} streams`);
        const started = performance.now();
        const results = await drive(sizes.placementStreams, sizes.placementWarmup, sequence.length, ask);
        const wallMs = performance.now() - started;
        const after = await counters(ctx);
        runs.push({
          placement,
          round,
          requests: results.length,
          coldLoads: after.adapterLoads - before.adapterLoads,
          ttftMs: results.map((r) => r.ttftMs),
          tokens: results.reduce((sum, r) => sum + r.tokens, 0),
          wallMs,
          placements: Object.fromEntries(
            Object.entries(after.placements).map(([reason, n]) => [reason, n - (before.placements[reason] ?? 0)]),
          ),
          moves: after.moves - before.moves,
        });
      }
    }
  } finally {
    await ctx.cluster.restartApi({});
  }

  const off = pool(runs, "off");
  const on = pool(runs, "on");
  const show = (r: Pooled) =>
    `${round(r.coldLoadsPer1000)} cold loads / 1000, warm hits ${round(r.warmHitRate)}, TTFT p50 ${round(r.ttftP50)} / p99 ${round(r.ttftP99)} ms, ${round(r.tokensPerS)} tok/s`;
  return {
    id: "placement",
    title: `Placement: ${sizes.placementWorkers} workers, ${adapters.length} adapters asked with Zipf(${ZIPF_S}) popularity`,
    figures: [
      ...[off, on].flatMap((r) => [
        figure(`placement ${r.placement}: cold loads per 1000 requests`, round(r.coldLoadsPer1000), "", show(r)),
        figure(`placement ${r.placement}: warm-hit rate`, round(r.warmHitRate), ""),
        figure(`placement ${r.placement}: TTFT p99`, round(r.ttftP99), "ms"),
      ]),
      figure("placement on: requests moved to the shared queue", on.moves, ""),
    ],
    targets: [
      target("warm-hit rate with placement", round(on.warmHitRate), ">=", 0.9, ""),
      target("TTFT p99 with placement ÷ without", round(on.ttftP99 / off.ttftP99), "<=", 1, "×"),
    ],
    notes: [
      `${sizes.placementWorkers} worker processes × 1 thread, each keeping ${sizes.placementMaxAdapters} adapters; ` +
        `${sizes.placementStreams} concurrent streams of ${sizes.placementTokens} tokens; the same ${sizes.placementWarmup} ` +
        `warm-up and ${sizes.placementRequests} measured requests (seeded) on fresh workers, off then on, ` +
        `${sizes.placementRounds} round(s) pooled`,
      `placement on: ${Object.entries(on.placements)
        .map(([reason, n]) => `${n} ${reason}`)
        .join(", ")}`,
    ],
    details: {
      zipf: ZIPF_S,
      seed: SEED,
      pooled: { off, on },
      runs: runs.map(({ ttftMs, ...run }) => ({ ...run, ttft: summarize(ttftMs) })),
    },
  };
}

function pool(runs: Run[], placement: Mode): Pooled {
  const mine = runs.filter((r) => r.placement === placement);
  const requests = mine.reduce((sum, r) => sum + r.requests, 0);
  const coldLoads = mine.reduce((sum, r) => sum + r.coldLoads, 0);
  const ttft = summarize(mine.flatMap((r) => r.ttftMs));
  const placements: Record<string, number> = {};
  for (const r of mine)
    for (const [reason, n] of Object.entries(r.placements)) placements[reason] = (placements[reason] ?? 0) + n;
  return {
    placement,
    requests,
    coldLoads,
    coldLoadsPer1000: (coldLoads / requests) * 1000,
    warmHitRate: 1 - coldLoads / requests,
    ttftP50: ttft.p50,
    ttftP99: ttft.p99,
    tokensPerS: (mine.reduce((sum, r) => sum + r.tokens, 0) / mine.reduce((sum, r) => sum + r.wallMs, 0)) * 1000,
    placements,
    moves: mine.reduce((sum, r) => sum + r.moves, 0),
  };
}

/** `n` adapter indices, adapter k (from 0) drawn with weight (k + 1)^-ZIPF_S. */
function zipfSequence(adapters: number, n: number): number[] {
  const weights = Array.from({ length: adapters }, (_, k) => (k + 1) ** -ZIPF_S);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const random = seededRandom(SEED);
  return Array.from({ length: n }, () => {
    let left = random() * total;
    for (const [k, w] of weights.entries()) {
      left -= w;
      if (left < 0) return k;
    }
    return adapters - 1;
  });
}

/** Requests `from` to `to` (indices into the sequence) over `streams` closed-loop clients. */
async function drive(
  streams: number,
  from: number,
  to: number,
  ask: (i: number) => Promise<StreamTiming>,
): Promise<StreamTiming[]> {
  const results: StreamTiming[] = [];
  let next = from;
  await Promise.all(
    Array.from({ length: streams }, async () => {
      while (next < to) results.push(await ask(next++));
    }),
  );
  return results;
}

/** The workers' adapter loads, and the API's placements by reason and moves, once the workers' last heartbeat is in. */
async function counters(ctx: BenchContext): Promise<Counters> {
  const text = await metricsAfterHeartbeat(ctx.http);
  const placements: Record<string, number> = {};
  for (const reason of ["warm", "assigned", "least-loaded", "spilled", "shared"]) {
    placements[reason] = sumOf(metricSamples(text, "hearth_placements_total", { reason }));
  }
  return {
    adapterLoads: sumOf(metricSamples(text, "hearth_worker_adapter_load_seconds_count")),
    placements,
    moves: sumOf(metricSamples(text, "hearth_placement_moves_total")),
  };
}
