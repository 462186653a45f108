import { llamaBuildInfo } from "../in-process.js";
import { allInOneContext, baseSequences } from "../hearth-cluster.js";
import { StepLoop } from "../step-loop.js";
import { workerStepsAfterHeartbeat } from "../metric-samples.js";
import { averageStep, describeStep, stepsBetween, sumSteps, type StepTimes } from "../step-times.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round } from "../stats.js";

interface Run {
  side: "hearth" | "in-process";
  round: number;
  streams: number;
  tokens: number;
  wallMs: number;
  tokensPerS: number;
  /** Mean sequences per generation step (one token per sequence): how many shared each decode. */
  sequencesPerStep: number;
  /** Its generation steps: their decodes, and the time between them (step-times.ts). */
  steps: StepTimes;
}

/** A level's rise counts as one when the in-process figure grows by more than this share. */
const RISE = 0.1;
/**
 * On a GPU, node-llama-cpp in process at the most streams measured ÷ at 1 stream: a GPU decodes
 * a batch of 16 in about the time of one, so 16 streams should give at least 4 × one's tokens/s
 * (issue 30). On a CPU a decode's cost grows with its sequences, and there is no such target.
 */
const GPU_BATCH_GAIN = 4;

/**
 * 8. Batching against its own ceiling: N sequences generating at once, in one context of
 * node-llama-cpp in the bench process (the most this engine does at N: its batches hold every
 * sequence that is ready), and N concurrent streams through Hearth, for each N, in rounds
 * that alternate which side goes first. Both sides count their generation steps, so the
 * figures show how many sequences shared each decode. Each round and level has prompts of its
 * own, the same on both sides, each begun by its own label: with one prompt for all, the
 * worker's prompt cache would skip evaluating what the in-process side evaluates each time.
 */
export async function batchingScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress, workerSettings } = ctx;
  const local = await ctx.inProcess();
  const tokens = sizes.batchingTokens;
  const body = (prompt: string) => ({ model: ctx.bench.name, prompt, max_tokens: tokens, temperature: 0 });
  const modelId = ctx.bench.name.split("/").pop()!;

  progress.step("batching: warming up");
  await Promise.all(Array.from({ length: 2 }, () => ctx.http.stream(body(ctx.prompt))));
  await local.generateTogether([ctx.prompt, ctx.prompt], tokens);

  const runs: Run[] = [];
  let before = await workerStepsAfterHeartbeat(ctx.http, modelId);
  for (let r = 0; r < sizes.batchingRounds; r++) {
    for (const [i, streams] of sizes.batchingLevels.entries()) {
      const order: Run["side"][] = (r + i) % 2 === 0 ? ["hearth", "in-process"] : ["in-process", "hearth"];
      const prompts = Array.from({ length: streams }, (_, j) => `${r + 1}.${streams}.${j + 1} ${ctx.prompt}`);
      for (const side of order) {
        progress.step(`batching: round ${r + 1}/${sizes.batchingRounds}, ${streams} streams, ${side}`);
        const started = performance.now();
        let generated = 0;
        let steps: StepTimes;
        if (side === "hearth") {
          const results = await Promise.all(prompts.map((prompt) => ctx.http.stream(body(prompt))));
          generated = results.reduce((sum, s) => sum + s.tokens, 0);
          const wallMs = performance.now() - started;
          const after = await workerStepsAfterHeartbeat(ctx.http, modelId);
          steps = stepsBetween(before, after);
          before = after;
          runs.push(run(side, r, streams, generated, wallMs, steps));
        } else {
          local.takeSteps();
          const results = await local.generateTogether(prompts, tokens);
          generated = results.reduce((sum, s) => sum + s.tokens, 0);
          const wallMs = performance.now() - started;
          runs.push(run(side, r, streams, generated, wallMs, local.takeSteps()));
        }
        if (generated !== streams * tokens)
          throw new Error(`${side} generated ${generated} tokens at ${streams} streams, not ${streams * tokens}`);
      }
    }
  }

  progress.step("batching: the step loop in process");
  const loop = await stepLoopLevels(ctx);

  const figures: Figure[] = [];
  const ratios: number[] = [];
  const perLevel = sizes.batchingLevels.map((streams) => {
    const of = (side: Run["side"]) => {
      const mine = runs.filter((x) => x.streams === streams && x.side === side);
      const tokensAll = mine.reduce((sum, x) => sum + x.tokens, 0);
      const wall = mine.reduce((sum, x) => sum + x.wallMs, 0);
      const steps = mine.reduce((sum, x) => sum + x.tokens / x.sequencesPerStep, 0);
      const step = averageStep(sumSteps(mine.map((x) => x.steps)));
      return { tokensPerS: (tokensAll / wall) * 1000, sequencesPerStep: tokensAll / steps, step };
    };
    return { streams, hearth: of("hearth"), inProcess: of("in-process") };
  });
  for (const level of perLevel) {
    const ratio = level.hearth.tokensPerS / level.inProcess.tokensPerS;
    ratios.push(ratio);
    figures.push(
      figure(
        `${level.streams} streams, in-process (one context): tokens/s`,
        round(level.inProcess.tokensPerS),
        "tok/s",
      ),
      figure(`${level.streams} streams, Hearth: tokens/s`, round(level.hearth.tokensPerS), "tok/s"),
      figure(`${level.streams} streams: Hearth ÷ in-process`, round(ratio), "×"),
      figure(
        `${level.streams} streams: sequences per decode step, in-process / Hearth`,
        round(level.inProcess.sequencesPerStep),
        "seq",
        `${round(level.inProcess.sequencesPerStep)} / ${round(level.hearth.sequencesPerStep)}`,
      ),
    );
    // Where a step's time goes, besides the decode: on a GPU, what decides how much a batch gains.
    for (const [side, step] of [
      ["in-process", level.inProcess.step],
      ["Hearth", level.hearth.step],
    ] as const) {
      if (!step) continue;
      figures.push(
        figure(
          `${level.streams} streams, ${side}: a step, decode to decode`,
          round(step.totalMs),
          "ms",
          describeStep(step, round),
        ),
      );
    }
  }
  // Wherever the engine's own figure rises from one level to the next, Hearth's must rise too.
  let flatWhereEngineRises = 0;
  for (let i = 1; i < perLevel.length; i++) {
    const [a, b] = [perLevel[i - 1]!, perLevel[i]!];
    if (b.inProcess.tokensPerS > a.inProcess.tokensPerS * (1 + RISE) && b.hearth.tokensPerS <= a.hearth.tokensPerS)
      flatWhereEngineRises++;
  }
  const worst = Math.min(...ratios);
  const [fewest, most] = [perLevel[0]!, perLevel[perLevel.length - 1]!];
  const gain = most.inProcess.tokensPerS / fewest.inProcess.tokensPerS;
  const gainLabel = `in process, ${most.streams} streams ÷ ${fewest.streams}`;
  figures.push(figure(gainLabel, round(gain), "×"));
  if (loop) {
    for (const { streams, tokensPerS } of loop) {
      figures.push(figure(`${streams} streams, step loop in process: tokens/s`, round(tokensPerS), "tok/s"));
    }
    const loopGain = loop[loop.length - 1]!.tokensPerS / loop[0]!.tokensPerS;
    figures.push(figure(`in process, step loop, ${most.streams} streams ÷ ${fewest.streams}`, round(loopGain), "×"));
  }
  const onGpu = (await llamaBuildInfo()).gpu !== "false";
  return {
    id: "batching",
    title: `Batching against its own ceiling: ${tokens} tokens per stream, Hearth vs node-llama-cpp's batches in process`,
    figures,
    targets: [
      target(
        `Hearth ÷ in-process batched, at every level (worst, at ${sizes.batchingLevels[ratios.indexOf(worst)]} streams)`,
        round(worst),
        ">=",
        0.9,
        "×",
      ),
      target(
        `levels where the in-process figure rises by over ${RISE * 100} % and Hearth's does not`,
        flatWhereEngineRises,
        "<=",
        0,
        "levels",
      ),
      ...(onGpu ? [target(`${gainLabel} (GPU)`, round(gain), ">=", GPU_BATCH_GAIN, "×")] : []),
    ],
    notes: [
      `${sizes.batchingRounds} rounds, alternating which side goes first; in process ` +
        `${baseSequences(workerSettings)} sequences in one context (a level's generations on the lowest ` +
        "sequence IDs, batches in ID order as the worker's: a step in one pass, sequence-ids.ts), Hearth " +
        `${workerSettings.contexts === 1 ? "the same" : `${workerSettings.contexts} contexts of ${workerSettings.sequences}`}, ` +
        `${workerSettings.threads} thread(s) a context; Hearth's steps from the worker's /metrics ` +
        "(hearth_worker_decode_step_sequences, _passes); a step, decode to decode: its decode, then the time until " +
        "the context's next (hearth_worker_step_between_seconds, in process the same observer): until the " +
        "first sampling, the samplings, and after them (the generation loops, the events, the dispatch)",
      ...(loop
        ? [
            "step loop: the same model, sequences and prompt through bench/src/step-loop.ts (the native context " +
              "driven directly, one decode and one batch sampling a step), after the rounds: what the levels " +
              "give without node-llama-cpp's per-sequence JavaScript",
          ]
        : []),
    ],
    details: { runs, levels: perLevel, stepLoop: loop ?? null },
  };
}

function run(side: Run["side"], r: number, streams: number, tokens: number, wallMs: number, steps: StepTimes): Run {
  return {
    side,
    round: r,
    streams,
    tokens,
    wallMs,
    tokensPerS: (tokens / wallMs) * 1000,
    sequencesPerStep: steps.steps > 0 ? steps.sequences / steps.steps : Number.NaN,
    steps,
  };
}

/**
 * Each level's tokens/s through the bench's step loop, in process (its own model and context,
 * as the in-process side's), the rounds pooled; undefined where the batch sampler is not built.
 */
async function stepLoopLevels(ctx: BenchContext): Promise<{ streams: number; tokensPerS: number }[] | undefined> {
  const { sizes } = ctx;
  const loop = await StepLoop.load(ctx.bench.path, allInOneContext(ctx.workerSettings));
  if (!loop) return undefined;
  try {
    const generate = (count: number) => loop.generateTogether(ctx.prompt, sizes.batchingTokens, count);
    await generate(2);
    const levels: { streams: number; tokensPerS: number }[] = [];
    for (const streams of sizes.batchingLevels) {
      const started = performance.now();
      let generated = 0;
      for (let r = 0; r < sizes.batchingRounds; r++) generated += await generate(streams);
      levels.push({ streams, tokensPerS: (generated / (performance.now() - started)) * 1000 });
    }
    return levels;
  } finally {
    await loop.dispose();
  }
}
