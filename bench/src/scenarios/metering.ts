import { usableCores } from "../../../src/process/usable-cores.js";
import type { HearthCluster } from "../hearth-cluster.js";
import { BenchHttp } from "../http-client.js";
import { runClients, streamFor } from "../load.js";
import {
  add,
  difference,
  type MeterAlone,
  type MeterCounters,
  meterCounters,
  NO_METER,
  UsageLog,
} from "../meter-probe.js";
import { cpuSeconds } from "../process-stats.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

type Metering = "on" | "off";

interface Side {
  metering: Metering;
  cluster: HearthCluster;
  http: BenchHttp;
}

/** One side's turn in one round: the overhead workload, then the load workload. */
interface Turn {
  metering: Metering;
  round: number;
  overhead: { tokens: number; ms: number; ttftMs: number[] };
  load: {
    requests: number;
    errors: number;
    /** The first few distinct errors' messages. */
    distinctErrors: string[];
    wallMs: number;
    ttftMs: number[];
    /** CPU seconds the API and the worker used during the load workload. */
    apiCpuS: number;
    workerCpuS: number;
    meter: MeterCounters;
  };
}

/**
 * The pause after every turn (the meter's drain included): what a turn leaves behind (keep-alive
 * sockets closing, expiring keys, collected garbage) then weighs on the next turn alike, whichever
 * side comes next.
 */
const SETTLE_MS = 2_000;

/**
 * 16. Metering's cost (issue 31): the overhead workload (one stream on the bench model, request
 * after request) and the load workload (`loadStreams` streams on hearth-tiny for
 * `meteringLoadSeconds`), on the bench's Hearth (metering on) and on one started beside it, the
 * same but for HEARTH_USAGE_METERING=false (one start costs what one restart does; alternating
 * by restarts takes several), in turns on, off, off, on, on, off…: the machine's load drifts, and
 * each side's turns are pooled. After each turn the bench waits until the meter has emptied the
 * usage log, so that no turn pays for another's records. The meter's own work: its writes and
 * records per write (hearth_usage_write_records), the delay from a request's end to its write, the
 * usage log's length (XLEN every 250 ms under load), the API's and worker's CPU time per request,
 * and the meter alone (meter-probe.ts), against what a request costs the machine.
 */
export async function meteringScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  progress.step("metering: starting a second Hearth, metering off");
  const off = await ctx.cluster.twin({ HEARTH_USAGE_METERING: "false" });
  const sides: Side[] = [
    { metering: "on", cluster: ctx.cluster, http: ctx.http },
    { metering: "off", cluster: off, http: new BenchHttp(off.url, off.apiKey) },
  ];
  const log = new UsageLog(ctx.cluster);
  const turns: Turn[] = [];
  let meter = NO_METER;
  let alone: MeterAlone | undefined;
  try {
    for (const side of sides) {
      progress.step(`metering ${side.metering}: warm-up`);
      for (let i = 0; i < sizes.warmup; i++) await side.http.stream(overheadBody(ctx));
      await runClients(sizes.loadStreams, 1, () => side.http.stream(loadBody(ctx)));
      await log.drained(SETTLE_MS);
    }
    const before = meterCounters(await ctx.http.getText("/metrics"));
    for (let r = 1; r <= sizes.meteringRounds; r++) {
      // on, off, then off, on: each side as often first as second, each turn after the same pause.
      for (const side of r % 2 === 1 ? sides : [...sides].reverse()) {
        turns.push(await runTurn(ctx, side, r, side.metering === "on" ? log : undefined));
        await log.drained(SETTLE_MS);
      }
    }
    meter = difference(meterCounters(await ctx.http.getText("/metrics")), before);
    progress.step(`metering: the meter alone, ${sizes.meteringProbeRecords} records`);
    alone = await log.meterAlone(sizes.meteringProbeRecords, ctx.tiny.name);
  } finally {
    log.close();
    sides[1]!.http.close();
    await off.close();
  }

  const [on, no] = [pool(turns, "on"), pool(turns, "off")];
  const perRound = (f: (t: Turn) => number) =>
    Array.from({ length: sizes.meteringRounds }, (_, i) => {
      const [a, b] = (["on", "off"] as const).map((m) => turns.find((t) => t.round === i + 1 && t.metering === m)!);
      return round(f(a!) / f(b!));
    });
  const loadRounds = perRound((t) => t.load.requests / t.load.wallMs);
  const overheadRounds = perRound((t) => t.overhead.tokens / t.overhead.ms);
  const loadRatio = on.requestsPerS / no.requestsPerS;
  const overheadRatio = on.tokensPerS / no.tokensPerS;
  const lengths = summarize(log.lengths);
  const writesPerS = on.meter.writes / on.loadSeconds;
  // What the machine spends on a load request without metering (every core, whoever used it),
  // against metering's part: the meter's CPU per request's record and its two appends (the API's and the worker's).
  const machineMsPerRequest = (usableCores() * 1000) / no.requestsPerS;
  const { meterMsPerRecord, appendMsPerRecord } = alone!;
  const share = (meterMsPerRecord + appendMsPerRecord) / machineMsPerRequest;
  return {
    id: "metering",
    title: `Metering's cost: the overhead and load workloads, metering on ÷ off, ${sizes.meteringRounds} alternated rounds`,
    figures: [
      pair("load: requests/s, metering on / off", on.requestsPerS, no.requestsPerS, "req/s"),
      figure(
        "load: on ÷ off (each round's)",
        round(loadRatio),
        "×",
        `${round(loadRatio)} × (${loadRounds.join(", ")})`,
      ),
      pair("load: TTFT p50, on / off", on.loadTtft.p50, no.loadTtft.p50, "ms"),
      pair("overhead: tokens/s, on / off", on.tokensPerS, no.tokensPerS, "tok/s"),
      figure(
        "overhead: on ÷ off (each round's)",
        round(overheadRatio),
        "×",
        `${round(overheadRatio)} × (${overheadRounds.join(", ")})`,
      ),
      pair("overhead: TTFT p50, on / off", on.overheadTtft.p50, no.overheadTtft.p50, "ms"),
      pair("API CPU per load request, on / off", on.apiCpuMsPerRequest, no.apiCpuMsPerRequest, "ms"),
      pair("worker CPU per load request, on / off", on.workerCpuMsPerRequest, no.workerCpuMsPerRequest, "ms"),
      figure(
        "meter under load: writes/s, records per write",
        round(writesPerS),
        "writes/s",
        `${round(writesPerS)} writes/s, ${round(on.meter.records / on.meter.writes)} records each`,
      ),
      figure("meter: mean delay from a request's end to its write", round((meter.delayS / meter.records) * 1000), "ms"),
      pair("usage log under load: mean / max entries", lengths.mean, lengths.max, "entries"),
      pair("meter alone / two appends: CPU per request", meterMsPerRecord, appendMsPerRecord, "ms"),
      figure(
        "metering's CPU ÷ the machine's per load request",
        round(share * 100),
        "%",
        `${round(share * 100)} % of ${round(machineMsPerRequest)} ms`,
      ),
    ],
    targets: [
      target("load requests/s, metering on ÷ off", round(loadRatio), ">=", 0.99, "×"),
      target("overhead tokens/s, metering on ÷ off", round(overheadRatio), ">=", 0.99, "×"),
      // The steady measure of the same: the ratios move by more than 1 % between rounds on a shared machine.
      target("metering's CPU ÷ the machine's per load request", round(share * 100), "<=", 1, "%"),
    ],
    notes: [
      "the bench's Hearth (metering on) and a second one beside it, the same but for HEARTH_USAGE_METERING=false, " +
        `each 1 API and 1 worker (${ctx.workerSettings.concurrency} jobs at once); a warm-up of each, then turns on, ` +
        `off, off, on…, ${sizes.meteringRounds} round(s) pooled per side; after each turn the meter emptied the ` +
        `usage log, and the next began ${SETTLE_MS / 1000} s after it`,
      `overhead: ${sizes.meteringOverheadRequests} requests of ${sizes.overheadTokens} tokens on the bench model per ` +
        `turn, one after another; load: ${sizes.loadStreams} streams of ${sizes.loadTokens}-token requests on ` +
        `hearth-tiny for ${sizes.meteringLoadSeconds} s per turn`,
      `errors under load: ${on.errors} with metering on, ${no.errors} off`,
      ...[...new Set(turns.flatMap((t) => t.load.distinctErrors.map((e) => `error (metering ${t.metering}): ${e}`)))],
      `the meter alone: ${alone!.records} records of a made-up account appended at once to the idle Hearth's log, ` +
        "each twice as a text answer's API process and worker append it (500 entries to a write, where load gives a " +
        "second's worth), the API's CPU until the log was empty less its idle rate's; the appends as the bench's own " +
        "CPU for them (an API's or a worker's, one at a time, costs more); Redis's part " +
        "is not counted. The machine's CPU per load request: its cores × the time per request without metering",
    ],
    details: { pooled: { on, off: no }, loadRounds, overheadRounds, logLength: lengths, meter, alone, turns },
  };
}

const overheadBody = (ctx: BenchContext) => ({
  model: ctx.bench.name,
  prompt: ctx.prompt,
  max_tokens: ctx.sizes.overheadTokens,
  temperature: 0,
});

const loadBody = (ctx: BenchContext) => ({
  model: ctx.tiny.name,
  prompt: ctx.prompt,
  max_tokens: ctx.sizes.loadTokens,
  temperature: 0,
});

/** One side's turn: the overhead workload, then the load workload, its CPU time and meter counters read around it. */
async function runTurn(ctx: BenchContext, side: Side, r: number, log: UsageLog | undefined): Promise<Turn> {
  const { sizes, progress } = ctx;
  const label = `metering ${side.metering} (round ${r}/${sizes.meteringRounds})`;
  const overhead = { tokens: 0, ms: 0, ttftMs: [] as number[] };
  for (let i = 0; i < sizes.meteringOverheadRequests; i++) {
    progress.step(`${label}: overhead request ${i + 1}/${sizes.meteringOverheadRequests}`);
    const t = await side.http.stream(overheadBody(ctx));
    overhead.tokens += t.tokens;
    overhead.ms += t.totalMs;
    overhead.ttftMs.push(t.ttftMs);
  }
  progress.step(`${label}: load, ${sizes.loadStreams} streams for ${sizes.meteringLoadSeconds} s`);
  const pids = [side.cluster.apiPid, side.cluster.workerPids[0]!];
  const meter0 = meterCounters(await side.http.getText("/metrics"));
  const [api0, worker0] = await Promise.all(pids.map(cpuSeconds));
  const stopSampling = log?.sample(250);
  const load = await streamFor(side.http, loadBody(ctx), sizes.loadStreams, sizes.meteringLoadSeconds).finally(() =>
    stopSampling?.(),
  );
  const [api1, worker1] = await Promise.all(pids.map(cpuSeconds));
  const meter1 = meterCounters(await side.http.getText("/metrics"));
  return {
    metering: side.metering,
    round: r,
    overhead,
    load: {
      requests: load.timings.length,
      errors: load.errors.length,
      distinctErrors: [...new Set(load.errors)].slice(0, 3),
      wallMs: load.wallMs,
      ttftMs: load.timings.map((t) => t.ttftMs),
      apiCpuS: api1! - api0!,
      workerCpuS: worker1! - worker0!,
      meter: difference(meter1, meter0),
    },
  };
}

/** One side's turns, pooled: throughputs over their summed times, TTFTs over all their requests. */
function pool(turns: Turn[], metering: Metering) {
  const mine = turns.filter((t) => t.metering === metering);
  const sum = (f: (t: Turn) => number) => mine.reduce((s, t) => s + f(t), 0);
  const requests = sum((t) => t.load.requests);
  return {
    tokensPerS: (sum((t) => t.overhead.tokens) / sum((t) => t.overhead.ms)) * 1000,
    overheadTtft: summarize(mine.flatMap((t) => t.overhead.ttftMs)),
    requestsPerS: (requests / sum((t) => t.load.wallMs)) * 1000,
    loadTtft: summarize(mine.flatMap((t) => t.load.ttftMs)),
    errors: sum((t) => t.load.errors),
    apiCpuMsPerRequest: (sum((t) => t.load.apiCpuS) / requests) * 1000,
    workerCpuMsPerRequest: (sum((t) => t.load.workerCpuS) / requests) * 1000,
    loadSeconds: sum((t) => t.load.wallMs) / 1000,
    meter: mine.reduce((m, t) => add(m, t.load.meter), NO_METER),
  };
}

/** A figure of both sides, metering on then off (its value: on's). */
const pair = (label: string, on: number, off: number, unit: string) =>
  figure(label, round(on), unit, `${round(on)} / ${round(off)} ${unit}`);
