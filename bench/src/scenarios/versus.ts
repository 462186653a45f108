import path from "node:path";
import { loadConfig } from "../../../src/config.js";
import { BenchHttp, type StreamTiming } from "../http-client.js";
import { allInOneContext, baseSequences } from "../hearth-cluster.js";
import { engineAlone, engineName } from "../engine-alone.js";
import { LlamaServer } from "../llama-server.js";
import { runClients } from "../load.js";
import { localRedisPid } from "../machine.js";
import { workerStepsAfterHeartbeat } from "../metric-samples.js";
import { cpuSpentMs, cpuTimes, type CpuTimes } from "../process-stats.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round, summarize, type Summary } from "../stats.js";
import { averageStep, describeStep, stepsBetween, sumSteps, type AverageStep, type StepTimes } from "../step-times.js";

type Side = "hearth" | "llama-server";

interface Run {
  side: Side;
  round: number;
  streams: number;
  /** Tokens the side generated, as its usage chunks count them. */
  tokens: number;
  wallMs: number;
  tokensPerS: number;
  ttftMs: number[];
  /** CPU milliseconds of each process of the side during the run (the bench's own as `client`). */
  cpuMs: CpuTimes;
  /** Hearth's: the worker's generation steps during the run, and the time between them. */
  steps?: StepTimes;
}

interface SideLevel {
  tokensPerS: number;
  tokens: number;
  ttft: Summary;
  /** CPU milliseconds per 1000 tokens generated, by process. */
  cpuPer1000: CpuTimes;
  /** Hearth's average generation step: its decode, then the time until the next. */
  step?: AverageStep;
}

/** The level whose ratio is the target (on a GPU also the 64 streams' level), and the target. */
const TARGET_STREAMS = 16;
const GPU_TARGET_STREAMS = [16, 64];
const TARGET_RATIO = 0.5;
/** llama-server's "every layer" (--n-gpu-layers takes a count; more than the model has is all). */
const ALL_LAYERS = 999;

/**
 * 18. Versus llama.cpp's own server: `llama-server` (given by `--versus llama-server=PATH`) on
 * the same GGUF (hearth-tiny, whose output is text: llama-server refuses the random-weight bench
 * models' invalid UTF-8), with the worker's threads, as many slots as the worker's context has
 * sequences and as much context per slot; N concurrent streamed completions on each side per
 * level, in rounds that alternate which side goes first. Aggregate tokens/s counts the tokens
 * each side reports generating, so an early end of text costs neither side.
 */
export async function versusScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress, workerSettings: worker } = ctx;
  const binary = ctx.llamaServer;
  if (binary === undefined) throw new Error("the versus scenario needs --versus llama-server=PATH");
  const tokens = sizes.versusTokens;
  const body = { model: ctx.tiny.name, prompt: ctx.prompt, max_tokens: tokens, temperature: 0 };
  const version = await LlamaServer.version(binary);
  // The worker's layers on the GPU where it computes on one: the same offload on both sides.
  const onGpu = Object.keys(ctx.backends).some((backend) => backend !== "cpu");
  const layers = loadConfig(process.env).worker.gpuLayers;
  const gpuLayers = !onGpu ? 0 : typeof layers === "number" ? layers : ALL_LAYERS;

  progress.step("versus: starting llama-server on hearth-tiny");
  const server = await LlamaServer.start({
    binary,
    model: ctx.tiny.path,
    threads: worker.threads,
    slots: baseSequences(worker),
    slotContext: worker.contextSize,
    gpuLayers,
  });
  // llama-server closes a connection after a stream although its headers say keep-alive (curl
  // retries: "Connection died"), so the next request sent on it would fail: one connection each.
  const theirs = new BenchHttp(server.url, "unused", { keepAlive: false });
  const clients: Record<Side, BenchHttp> = { hearth: ctx.http, "llama-server": theirs };
  const redisPid = await localRedisPid(ctx.cluster.redisUrl);
  const processes: Record<Side, Record<string, number>> = {
    hearth: {
      worker: ctx.cluster.workerPids[0]!,
      api: ctx.cluster.apiPid,
      ...(redisPid === undefined ? {} : { redis: redisPid }),
    },
    "llama-server": { "llama-server": server.pid },
  };
  const runs: Run[] = [];
  try {
    // Every sequence (slot) of each side once, twice over: a first round cold on Hearth's side
    // (sequences made, code not yet optimized) ran at a third of the next rounds' speed.
    progress.step("versus: warming up both sides");
    for (const http of Object.values(clients)) {
      for (let i = 0; i < 2; i++) await Promise.all(Array.from({ length: worker.sequences }, () => http.stream(body)));
    }
    // Hearth's steps are read from the worker's /metrics after each of its runs (a heartbeat's wait).
    const modelId = ctx.tiny.name.split("/").pop()!;
    let stepsBefore = await workerStepsAfterHeartbeat(ctx.http, modelId);
    for (let r = 0; r < sizes.versusRounds; r++) {
      for (const [i, streams] of sizes.versusLevels.entries()) {
        const order: Side[] = (r + i) % 2 === 0 ? ["hearth", "llama-server"] : ["llama-server", "hearth"];
        for (const side of order) {
          progress.step(`versus: round ${r + 1}/${sizes.versusRounds}, ${streams} streams, ${side}`);
          const before = await cpuTimes(processes[side], "client");
          const { results, wallMs } = await runClients<StreamTiming>(streams, 1, () =>
            clients[side].stream(body),
          ).catch((error: Error) => {
            throw new Error(`${side} at ${streams} streams, round ${r + 1}: ${error.message}`, { cause: error });
          });
          const generated = results.reduce((sum, s) => sum + s.tokens, 0);
          const cpuMs = cpuSpentMs(before, await cpuTimes(processes[side], "client"));
          let steps: StepTimes | undefined;
          if (side === "hearth") {
            const after = await workerStepsAfterHeartbeat(ctx.http, modelId);
            steps = stepsBetween(stepsBefore, after);
            stepsBefore = after;
          }
          runs.push({
            side,
            round: r,
            streams,
            tokens: generated,
            wallMs,
            tokensPerS: (generated / wallMs) * 1000,
            ttftMs: results.map((s) => s.ttftMs),
            cpuMs,
            ...(steps ? { steps } : {}),
          });
        }
      }
    }
  } finally {
    theirs.close();
    await server.stop();
  }
  progress.step("versus: node-llama-cpp alone, in this process, on hearth-tiny");
  const engine = await engineAlone(ctx.tiny.path, body.prompt, tokens, sizes.versusRounds, allInOneContext(worker));

  const of = (side: Side, streams: number): SideLevel => {
    const mine = runs.filter((x) => x.streams === streams && x.side === side);
    const generated = mine.reduce((sum, x) => sum + x.tokens, 0);
    const wall = mine.reduce((sum, x) => sum + x.wallMs, 0);
    const cpuPer1000: CpuTimes = {};
    for (const run of mine) {
      for (const [name, ms] of Object.entries(run.cpuMs)) cpuPer1000[name] = (cpuPer1000[name] ?? 0) + ms;
    }
    for (const name of Object.keys(cpuPer1000)) cpuPer1000[name] = (cpuPer1000[name]! / generated) * 1000;
    const step = averageStep(sumSteps(mine.flatMap((x) => (x.steps ? [x.steps] : []))));
    return {
      tokensPerS: (generated / wall) * 1000,
      tokens: generated,
      ttft: summarize(mine.flatMap((x) => x.ttftMs)),
      cpuPer1000,
      ...(step ? { step } : {}),
    };
  };
  const levels = sizes.versusLevels.map((streams) => {
    const hearth = of("hearth", streams);
    const llamaServer = of("llama-server", streams);
    return { streams, hearth, llamaServer, ratio: hearth.tokensPerS / llamaServer.tokensPerS };
  });
  const figures: Figure[] = levels.flatMap(({ streams, hearth, llamaServer, ratio }) => [
    figure(`${streams} streams, llama-server: tokens/s`, round(llamaServer.tokensPerS), "tok/s"),
    figure(`${streams} streams, Hearth: tokens/s`, round(hearth.tokensPerS), "tok/s"),
    figure(`${streams} streams: Hearth ÷ llama-server`, round(ratio), "×"),
    ttftFigure(`${streams} streams, llama-server: TTFT p50 / p99`, llamaServer.ttft),
    ttftFigure(`${streams} streams, Hearth: TTFT p50 / p99`, hearth.ttft),
    // Where the worker's step goes besides the decode (issue 30: profile a worker at 16 and 64 streams).
    ...(hearth.step
      ? [
          figure(
            `${streams} streams, Hearth: a step, decode to decode`,
            round(hearth.step.totalMs),
            "ms",
            describeStep(hearth.step, round),
          ),
        ]
      : []),
  ]);
  // The target's level, or the most streams measured when a short run leaves it out.
  const targetLevel = levels.find((l) => l.streams === TARGET_STREAMS) ?? levels[levels.length - 1]!;
  // Where each side's CPU goes per token at that level (the cause of the ratio on a machine that
  // both sides keep busy), and what node-llama-cpp costs alone, with no serving around it.
  figures.push(
    cpuFigure(`${targetLevel.streams} streams, Hearth: CPU ms per 1000 tokens`, targetLevel.hearth.cpuPer1000),
    cpuFigure(
      `${targetLevel.streams} streams, llama-server: CPU ms per 1000 tokens`,
      targetLevel.llamaServer.cpuPer1000,
    ),
    ...engine.flatMap((e) => {
      const who = engineName(e);
      return [
        figure(`${who}, ${e.sequences} sequences: tokens/s`, round(e.tokensPerS), "tok/s"),
        figure(`${who}, ${e.sequences} sequences: CPU ms per 1000 tokens`, round(e.cpuPer1000), "ms"),
      ];
    }),
  );
  for (const alone of engine.filter((e) => e.sequences === targetLevel.streams)) {
    const who = engineName(alone);
    figures.push(
      figure(
        `${who} ÷ llama-server, ${alone.sequences} streams`,
        round(alone.tokensPerS / targetLevel.llamaServer.tokensPerS),
        "×",
      ),
    );
  }
  // Issue 30's bar: at 16 streams on the CPU; at 16 and 64 on a GPU (those measured).
  const targetLevels = onGpu ? levels.filter((l) => GPU_TARGET_STREAMS.includes(l.streams)) : [targetLevel];
  if (targetLevels.length === 0) targetLevels.push(targetLevel);
  const expected = sizes.versusRounds * tokens;
  const short = levels.flatMap((l) =>
    (["hearth", "llamaServer"] as const)
      .filter((side) => l[side].tokens < l.streams * expected)
      .map((side) => `${side === "hearth" ? "Hearth" : "llama-server"} ${l[side].tokens} at ${l.streams} streams`),
  );
  return {
    id: "versus",
    title: `Versus llama-server: ${tokens}-token streams on hearth-tiny, the same GGUF and threads`,
    figures,
    targets: targetLevels.map((level) =>
      target(
        `Hearth ÷ llama-server, aggregate tokens/s at ${level.streams} streams${onGpu ? " (GPU)" : ""}`,
        round(level.ratio),
        ">=",
        TARGET_RATIO,
        "×",
      ),
    ),
    notes: [
      `${sizes.versusRounds} rounds, alternating which side goes first; both sides: ${worker.threads} thread(s), ` +
        `${onGpu ? `${gpuLayers === ALL_LAYERS ? "every layer" : `${gpuLayers} layers`} on the GPU (${Object.keys(ctx.backends).join("+")}), ` : ""}` +
        `${baseSequences(worker)} sequences (llama-server slots; Hearth's in ${worker.contexts} ` +
        `context(s), each on its threads) of ${worker.contextSize} tokens; beyond that many ` +
        "streams both queue",
      `llama-server: ${version}; ${path.basename(binary)} ${server.args.join(" ")}`,
      "Hearth's step: the worker's decode of one token per sequence, then the time until its context's " +
        "next (hearth_worker_step_between_seconds): until the first sampling, the samplings, and after them " +
        "(the generation loops, the requests' events, the next batch's dispatch)",
      short.length === 0
        ? "every stream generated max_tokens on both sides"
        : `tokens short of max_tokens (an end of text; tokens/s counts those generated): ${short.join(", ")}`,
    ],
    details: { runs, levels, engineAlone: engine, llamaServer: { version, args: server.args } },
  };
}

/** CPU per 1000 tokens: the sum as the value, each process's share shown. */
function cpuFigure(label: string, per1000: CpuTimes): Figure {
  const parts = Object.entries(per1000);
  const total = parts.reduce((sum, [, ms]) => sum + ms, 0);
  const shown = parts.map(([name, ms]) => `${name} ${Math.round(ms)}`).join(" + ");
  return figure(label, round(total), "ms", `${Math.round(total)} (${shown})`);
}

function ttftFigure(label: string, ttft: Summary): Figure {
  return figure(label, round(ttft.p50), "ms", `${round(ttft.p50)} / ${round(ttft.p99)} ms`);
}
