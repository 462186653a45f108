import type { StreamTiming } from "../http-client.js";
import { runClients } from "../load.js";
import { workerStepsAfterHeartbeat } from "../metric-samples.js";
import { stepsBetween, type StepTimes } from "../step-times.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round, summarize, type Summary } from "../stats.js";
import { convertedAdapters, measureSwitchCost, type SwitchCost } from "../switch-cost.js";

interface Run {
  streams: number;
  mode: "base" | "adapters";
  tokensPerS: number;
  ttft: Summary;
  wallMs: number;
  tokens: number;
  /** From as many streams as adapters up: the worker's generation steps of the run (its /metrics). */
  steps?: StepTimes;
}

/** The worst adapters ÷ base ratio that is not a cliff (issue 30). */
const NO_CLIFF = 0.7;

/**
 * 3. Concurrency and adapters: N concurrent streams, all on the base model, then spread
 * over distinct deployed adapters (stream i on adapter i mod spread), at each level;
 * aggregate tokens/s and time to first token. The two modes alternate which goes first
 * from level to level, so that drift in the machine's load does not favour one.
 */
export async function concurrencyScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const spread = ctx.adapters.slice(0, sizes.adapterSpread);
  if (spread.length < sizes.adapterSpread)
    throw new Error(`${sizes.adapterSpread} adapters are needed, ${spread.length} are deployed`);
  const body = (model: string) => ({ model, prompt: ctx.prompt, max_tokens: sizes.concurrencyTokens, temperature: 0 });

  progress.step("concurrency: warming up the adapters");
  await Promise.all([ctx.bench.name, ...spread].map((model) => ctx.http.stream({ ...body(model), max_tokens: 2 })));

  const runs: Run[] = [];
  const modelId = ctx.bench.name.split("/").pop()!;
  for (const [i, streams] of sizes.concurrencyLevels.entries()) {
    const order: Run["mode"][] = i % 2 === 0 ? ["base", "adapters"] : ["adapters", "base"];
    // Once every adapter has a stream, the worker's own steps tell what each mode's decodes cost
    // (a reading waits for a heartbeat, so not below).
    let before = streams >= spread.length ? await workerStepsAfterHeartbeat(ctx.http, modelId) : undefined;
    for (const mode of order) {
      progress.step(
        `concurrency: ${streams} streams on ${mode === "base" ? "the base model" : `${spread.length} adapters`}`,
      );
      const { results, wallMs } = await runClients<StreamTiming>(streams, sizes.concurrencyRounds, (client) =>
        ctx.http.stream(body(mode === "base" ? ctx.bench.name : spread[client % spread.length]!)),
      );
      const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
      let steps: StepTimes | undefined;
      if (before) {
        const after = await workerStepsAfterHeartbeat(ctx.http, modelId);
        steps = stepsBetween(before, after);
        before = after;
      }
      runs.push({
        streams,
        mode,
        tokensPerS: (tokens / wallMs) * 1000,
        ttft: summarize(results.map((r) => r.ttftMs)),
        wallMs,
        tokens,
        steps,
      });
    }
  }

  const figures: Figure[] = [];
  const ratios: number[] = [];
  for (const streams of sizes.concurrencyLevels) {
    const base = runs.find((r) => r.streams === streams && r.mode === "base")!;
    const adapters = runs.find((r) => r.streams === streams && r.mode === "adapters")!;
    const ratio = adapters.tokensPerS / base.tokensPerS;
    ratios.push(ratio);
    figures.push(
      figure(`${streams} streams, base: tokens/s`, round(base.tokensPerS), "tok/s"),
      figure(
        `${streams} streams, base: TTFT p50 / p99`,
        round(base.ttft.p50),
        "ms",
        `${round(base.ttft.p50)} / ${round(base.ttft.p99)} ms`,
      ),
      figure(`${streams} streams, ${spread.length} adapters: tokens/s`, round(adapters.tokensPerS), "tok/s"),
      figure(
        `${streams} streams, ${spread.length} adapters: TTFT p50 / p99`,
        round(adapters.ttft.p50),
        "ms",
        `${round(adapters.ttft.p50)} / ${round(adapters.ttft.p99)} ms`,
      ),
      figure(`${streams} streams: adapters ÷ base`, round(ratio), "×"),
    );
  }
  const worst = Math.min(...ratios);
  for (const streams of sizes.concurrencyLevels)
    figures.push(...decodeFigures(runs.filter((r) => r.streams === streams)));

  progress.step("concurrency: what an adapter switch costs, in process");
  const switchCost = await switchCostOf(ctx);
  figures.push(...switchCostFigures(switchCost));
  return {
    id: "concurrency",
    title: `Concurrency and adapters: ${sizes.concurrencyTokens} tokens per stream, base model vs ${spread.length} distinct adapters`,
    figures,
    targets: [
      target(
        `adapters ÷ base at every level (worst, at ${sizes.concurrencyLevels[ratios.indexOf(worst)]} streams)`,
        round(worst),
        ">=",
        0.9,
        "×",
      ),
      // Issue 30's bar for many adapters, on the CPU and the GPU: no cliff once they outnumber contexts.
      target(
        `adapters ÷ base at every level up to ${Math.max(...sizes.concurrencyLevels)} streams, no cliff`,
        round(worst),
        ">=",
        NO_CLIFF,
        "×",
      ),
    ],
    notes: [
      `${sizes.concurrencyRounds} request(s) per stream per level; worker: ${ctx.workerSettings.sequences} sequences per context, ` +
        `${ctx.workerSettings.threads} thread(s); the adapters share ${ctx.workerSettings.adapterContexts} contexts of ` +
        `${ctx.workerSettings.adapterSequences} sequences each, every batch one adapter's sequences`,
      `adapter switch: the worker's engine in the bench process, one context shared by two converted adapters, ` +
        `${switchCost.sequences} requests on one adapter against ${switchCost.sequences} on each of the two ` +
        `(${switchCost.switches.switching} switches in ${switchCost.decodes.switching} decodes; ` +
        `${switchCost.switches.steady} in ${switchCost.decodes.steady} of one adapter), ${sizes.switchCostTokens} tokens, ` +
        `${sizes.switchCostRounds} alternating rounds`,
    ],
    details: {
      runs,
      ratios: Object.fromEntries(sizes.concurrencyLevels.map((s, i) => [s, ratios[i]])),
      switchCost,
    },
  };
}

/**
 * Why a level's ratio is what it is: each mode's generation steps on the worker, their
 * sequences, and the decode time per token they took (contexts decoding side by side each count
 * theirs, so on a CPU it is the decodes' thread time, and over the run's wall time how many
 * decoded at once). The base model's steps batch every stream; each adapter batch holds one
 * adapter's sequences only.
 */
function decodeFigures(level: Run[]): Figure[] {
  const figures: Figure[] = [];
  const perToken: Record<string, number> = {};
  for (const run of level) {
    const s = run.steps;
    if (!s || s.steps === 0 || s.sequences === 0) continue;
    const label = `${run.streams} streams, ${run.mode === "base" ? "base" : "adapters"}`;
    perToken[run.mode] = (s.decodeSeconds * 1000) / s.sequences;
    figures.push(
      figure(
        `${label}: decode time per token`,
        round(perToken[run.mode]!),
        "ms",
        `${round(perToken[run.mode]!)} ms (${s.steps} steps of ${round(s.sequences / s.steps)} sequences, ` +
          `${round((s.decodeSeconds * 1000) / s.steps)} ms a decode, ${round((s.decodeSeconds * 1000) / run.wallMs)} at once)`,
      ),
    );
  }
  if (perToken.base !== undefined && perToken.adapters !== undefined)
    figures.push(
      figure(
        `${level[0]!.streams} streams: decode time per token, adapters ÷ base`,
        round(perToken.adapters / perToken.base),
        "×",
      ),
    );
  return figures;
}

/** One context shared by two of the deployed adapters' converted files, half the worker's sequences each. */
async function switchCostOf(ctx: BenchContext): Promise<SwitchCost> {
  const [first, second] = await convertedAdapters(ctx.cluster.storageDir, 2);
  if (first === undefined || second === undefined) throw new Error("two converted adapters are needed");
  const sequences = Math.max(1, Math.floor(ctx.workerSettings.sequences / 2));
  return measureSwitchCost({
    modelPath: ctx.bench.path,
    adapterPaths: [first, second],
    threads: ctx.workerSettings.threads,
    contextSize: ctx.workerSettings.contextSize,
    sequences,
    tokens: ctx.sizes.switchCostTokens,
    rounds: ctx.sizes.switchCostRounds,
  });
}

function switchCostFigures(cost: SwitchCost): Figure[] {
  const per = (kind: "decodeMs" | "stepMs") => cost[kind].switching - cost[kind].steady;
  const pair = (kind: "decodeMs" | "stepMs") => `${round(cost[kind].steady)} / ${round(cost[kind].switching)} ms`;
  return [
    figure(
      `adapter switch: a ${cost.sequences}-sequence decode, steady / after a switch`,
      round(cost.decodeMs.switching),
      "ms",
      pair("decodeMs"),
    ),
    figure(
      `adapter switch: a ${cost.sequences}-sequence step, steady / after a switch`,
      round(cost.stepMs.switching),
      "ms",
      pair("stepMs"),
    ),
    figure("adapter switch: ms added to the decode", round(per("decodeMs")), "ms"),
    figure("adapter switch: ms added to the step", round(per("stepMs")), "ms"),
  ];
}
