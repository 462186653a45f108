import { benchAccount } from "../bench-accounts.js";
import { BatchClient, type BatchTiming } from "../batch-client.js";
import { BenchHttp } from "../http-client.js";
import { runClients } from "../load.js";
import { metricSamples, sumOf } from "../metric-samples.js";
import { cpuSeconds } from "../process-stats.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";
import { SteadyClient } from "../steady-client.js";

/** CPU seconds the API and worker processes used during a run. */
interface CpuUse {
  api: number;
  worker: number;
}

/** The interactive requests the API sent to the express lane during a run. */
interface LaneUse {
  expressed: number;
}

/** A run of the requests: as a batch (its lines) or sent directly, with the processes' CPU. */
type Run = { round: number; lines: number; seconds: number; tokens: number; cpu: CpuUse } & Partial<BatchTiming>;

/**
 * 16. Batches (issue 32): a chat batch of `batchLines` lines on hearth-tiny, the API keeping
 * twice as many lines in flight as the worker takes jobs (HEARTH_BATCH_CONCURRENCY), so that a
 * line waits whenever one ends. Its throughput (lines and tokens a second, from its creation to
 * its completion) with nothing else running is compared with the engine's saturated throughput:
 * the same requests sent directly by as many clients. And an interactive client (another
 * account, in a process of its own) sends a streamed request every `batchInteractiveMs`: its
 * time to first token while the batch runs is compared with its time alone, and with its time
 * beside the same requests sent directly (the same load, without a batch). Each round runs the
 * pairs, which side first alternating by round; the API's and the worker's CPU seconds are read
 * around each run.
 */
export async function batchScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress, cluster } = ctx;
  const lines = sizes.batchLines;
  const clients = 2 * ctx.workerSettings.concurrency;
  const admin = new BenchHttp(cluster.url, cluster.apiKey);
  const ownerKey = await benchAccount(admin, "bench-batch", Math.max(lines, clients) * 2);
  const owner = new BenchHttp(cluster.url, ownerKey);
  const batches = new BatchClient(cluster.url, ownerKey, owner);
  const b = await SteadyClient.start({
    url: cluster.url,
    apiKey: await benchAccount(admin, "bench-interactive", 16),
    body: { model: ctx.tiny.name, prompt: ctx.prompt, max_tokens: sizes.batchTokens, temperature: 0 },
  });
  const request = (i: number) => ({
    model: ctx.tiny.name,
    messages: [{ role: "user", content: `${ctx.prompt} (${i})` }],
    max_tokens: sizes.batchTokens,
    temperature: 0,
  });
  const input = (count: number) =>
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({ custom_id: `r${i}`, method: "POST", url: "/v1/chat/completions", body: request(i) }),
    ).join("\n");
  /** `count` of the requests sent directly, `clients` at a time. */
  const direct = async (count: number) => {
    let next = 0;
    let tokens = 0;
    const { wallMs } = await runClients(clients, Math.ceil(count / clients), async () => {
      const i = next++;
      if (i >= count) return;
      const reply = await owner.postJson("/v1/chat/completions", request(i));
      if (reply.status !== 200) throw new Error(`a request failed: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
      tokens += (reply.body as { usage: { completion_tokens: number } }).usage.completion_tokens;
    });
    return { lines: count, seconds: wallMs / 1000, tokens };
  };
  const cpu = async (): Promise<CpuUse> => ({
    api: await cpuSeconds(cluster.apiPid),
    worker: await cpuSeconds(cluster.workerPids[0]!),
  });
  const measured = async <T>(round: number, work: () => Promise<T>) => {
    const before = await cpu();
    const result = await work();
    const after = await cpu();
    return { round, ...result, cpu: { api: after.api - before.api, worker: after.worker - before.worker } };
  };
  try {
    await cluster.restartApi({ HEARTH_BATCH_CONCURRENCY: String(clients) });
    progress.step("batch: uploading the input, warming up");
    const fileId = await batches.upload(input(lines));
    await batches.run(await batches.upload(input(Math.min(lines, 4 * clients))));
    await direct(Math.min(lines, 4 * clients));
    await b.sequential(5);

    const runs = { direct: [] as Run[], alone: [] as Run[], beside: [] as Run[], besideDirect: [] as Run[] };
    const lane = { beside: [] as LaneUse[], besideDirect: [] as LaneUse[] };
    /** The express lane's use during `work` (all of it the interactive client's). */
    const laneUse = async <T>(into: LaneUse[], work: () => Promise<T>): Promise<T> => {
      const read = async () =>
        sumOf(metricSamples(await admin.getText("/metrics"), "hearth_express_requests_total", { outcome: "sent" }));
      const before = await read();
      const result = await work();
      into.push({ expressed: (await read()) - before });
      return result;
    };
    const ttfts = { alone: [] as number[], beside: [] as number[], besideDirect: [] as number[] };
    let aloneMs = 5_000;
    for (let r = 1; r <= sizes.batchRounds; r++) {
      const step = (what: string) => progress.step(`batch: round ${r}/${sizes.batchRounds}, ${what}`);
      const throughput = [
        async () => {
          step(`${lines} requests sent directly by ${clients} clients`);
          runs.direct.push(await measured(r, () => direct(lines)));
        },
        async () => {
          step(`a batch of ${lines} lines alone`);
          const run = await measured(r, () => batches.run(fileId));
          runs.alone.push(run);
          aloneMs = run.seconds * 1000;
        },
      ];
      const latency = [
        async () => {
          step("interactive requests alone");
          const steady = b.steady(sizes.batchInteractiveMs);
          await new Promise((resolve) => setTimeout(resolve, aloneMs));
          ttfts.alone.push(...(await steady.stop()));
        },
        async () => {
          step(`interactive requests beside a batch of ${lines} lines`);
          const interactive = { client: b, periodMs: sizes.batchInteractiveMs, ttfts: ttfts.beside };
          runs.beside.push(await laneUse(lane.beside, () => measured(r, () => batches.run(fileId, interactive))));
        },
        async () => {
          step(`interactive requests beside ${lines} requests sent directly`);
          await laneUse(lane.besideDirect, async () => {
            const steady = b.steady(sizes.batchInteractiveMs);
            runs.besideDirect.push(await measured(r, () => direct(lines)));
            ttfts.besideDirect.push(...(await steady.stop()));
          });
        },
      ];
      if (r % 2 === 0) {
        throughput.reverse();
        latency.reverse();
      }
      for (const run of [...throughput, ...latency]) await run();
    }
    return report(ctx, clients, runs, ttfts, lane);
  } finally {
    await cluster.restartApi({});
    admin.close();
    owner.close();
    b.close();
  }
}

function report(
  ctx: BenchContext,
  clients: number,
  runs: Record<"direct" | "alone" | "beside" | "besideDirect", Run[]>,
  ttfts: Record<"alone" | "beside" | "besideDirect", number[]>,
  lane: Record<"beside" | "besideDirect", LaneUse[]>,
): ScenarioResult {
  const { sizes } = ctx;
  const sum = (xs: Run[], f: (x: Run) => number) => xs.reduce((total, x) => total + f(x), 0);
  const rate = (xs: Run[]) => ({
    lines: sum(xs, (x) => x.lines) / sum(xs, (x) => x.seconds),
    tokens: sum(xs, (x) => x.tokens) / sum(xs, (x) => x.seconds),
    /** Milliseconds of CPU per line. */
    api: (1000 * sum(xs, (x) => x.cpu.api)) / sum(xs, (x) => x.lines),
    worker: (1000 * sum(xs, (x) => x.cpu.worker)) / sum(xs, (x) => x.lines),
  });
  const batch = rate(runs.alone);
  const saturated = rate(runs.direct);
  const inProgress = sum(runs.alone, (x) => x.lines) / sum(runs.alone, (x) => x.inProgressSeconds ?? x.seconds);
  const alone = summarize(ttfts.alone);
  const beside = summarize(ttfts.beside);
  const besideDirect = summarize(ttfts.besideDirect);
  const ttftRatio = beside.p50 / alone.p50;
  const linesRatio = batch.lines / saturated.lines;
  const tokensRatio = batch.tokens / saturated.tokens;
  const failed = sum([...runs.alone, ...runs.beside], (x) => x.failed ?? 0);
  const ms = (s: ReturnType<typeof summarize>) => `${round(s.p50)} / ${round(s.p99)} ms`;
  const expressed = lane.beside.reduce((total, x) => total + x.expressed, 0);
  return {
    id: "batch",
    title: `Batches: ${sizes.batchLines} chat lines on hearth-tiny, beside interactive requests`,
    figures: [
      figure("interactive TTFT alone p50 / p99", round(alone.p50), "ms", ms(alone)),
      figure("interactive TTFT beside the batch p50 / p99", round(beside.p50), "ms", ms(beside)),
      figure("interactive TTFT beside the batch ÷ alone (p50)", round(ttftRatio), "×"),
      figure(
        "interactive TTFT beside the requests sent directly p50 / p99",
        round(besideDirect.p50),
        "ms",
        ms(besideDirect),
      ),
      figure(
        "interactive TTFT beside the batch ÷ beside them sent directly (p50)",
        round(beside.p50 / besideDirect.p50),
        "×",
      ),
      figure(
        "the batch alone",
        round(batch.lines),
        "lines/s",
        `${round(batch.lines)} lines/s, ${round(batch.tokens)} tokens/s`,
      ),
      figure("the batch alone, while in progress", round(inProgress), "lines/s"),
      figure(
        "the requests sent directly (saturated)",
        round(saturated.lines),
        "requests/s",
        `${round(saturated.lines)} requests/s, ${round(saturated.tokens)} tokens/s`,
      ),
      figure("the batch ÷ saturated (lines)", round(linesRatio), "×"),
      figure("the batch ÷ saturated (tokens)", round(tokensRatio), "×"),
      figure(
        "CPU per line, batch: API / worker",
        round(batch.api),
        "ms",
        `${round(batch.api)} / ${round(batch.worker)} ms`,
      ),
      figure(
        "CPU per request, sent directly: API / worker",
        round(saturated.api),
        "ms",
        `${round(saturated.api)} / ${round(saturated.worker)} ms`,
      ),
      figure(
        "interactive requests beside the batch sent to the express lane",
        expressed,
        "requests",
        `${expressed} of ${beside.n}`,
      ),
      figure("the batch beside interactive requests", round(rate(runs.beside).lines), "lines/s"),
      figure("the batches' failed lines", failed, "lines"),
    ],
    targets: [
      target("interactive TTFT beside a batch within 1.2× of alone (p50)", round(ttftRatio), "<=", 1.2, "×"),
      target("the batch's throughput, of saturated (lines/s)", round(linesRatio), ">=", 0.9, "×"),
      target("the batch's throughput, of saturated (tokens/s)", round(tokensRatio), ">=", 0.9, "×"),
    ],
    notes: [
      `${sizes.batchRounds} round(s); each times the batch alone and the ${sizes.batchLines} requests sent directly by ` +
        `${clients} clients (twice the jobs the worker takes at once; HEARTH_BATCH_CONCURRENCY=${clients}), then the ` +
        `interactive client (a streamed request every ${sizes.batchInteractiveMs} ms, ${sizes.batchTokens} tokens) alone, ` +
        `beside the batch and beside the requests sent directly; which comes first alternates by round. A batch is ` +
        `timed from its creation to its completion (validation and output files included).`,
      `${beside.n} interactive requests beside the batch, ${besideDirect.n} beside the requests sent directly, ${alone.n} alone.`,
    ],
    details: { runs, ttfts, lane },
  };
}
