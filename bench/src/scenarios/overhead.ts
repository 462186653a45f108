import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { probeStages } from "../stage-probe.js";
import { pairedDifferences, round, summarize } from "../stats.js";

/**
 * 1. Overhead: one stream at a time, greedy, through the HTTP API (SSE read by a real
 * HTTP client) and directly in-process on the same model file, interleaved request by
 * request so that machine noise hits both alike. The in-process side runs only while
 * the worker is idle. Each pair has a prompt of its own, begun by its number: the worker's prompt
 * cache would otherwise find each prompt's cells from the request before and skip evaluating it,
 * where the in-process side evaluates it each time (the cache's gain is the prefix scenario's).
 */
export async function overheadScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const local = await ctx.inProcess();
  const body = (maxTokens: number, prompt = ctx.prompt) => ({
    model: ctx.bench.name,
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
  });
  const hearth = { ttft: [] as number[], tokens: 0, ms: 0 };
  const inProcess = { ttft: [] as number[], tokens: 0, ms: 0 };

  for (let i = 0; i < sizes.warmup; i++) {
    progress.step(`overhead: warm-up ${i + 1}/${sizes.warmup}`);
    await ctx.http.stream(body(sizes.overheadTokens));
    await local.generate(ctx.prompt, sizes.overheadTokens);
  }
  const pairs = sizes.overheadPairs + sizes.overheadTtftPairs;
  for (let i = 0; i < pairs; i++) {
    const long = i < sizes.overheadPairs;
    const maxTokens = long ? sizes.overheadTokens : 1;
    progress.step(`overhead: pair ${i + 1}/${pairs} (${maxTokens} tokens, Hearth then in-process)`);
    const prompt = `${i + 1}. ${ctx.prompt}`;
    const h = await ctx.http.stream(body(maxTokens, prompt));
    const p = await local.generate(prompt, maxTokens);
    if (h.tokens !== p.tokens)
      throw new Error(`Hearth generated ${h.tokens} tokens, in-process ${p.tokens}: not the same work`);
    hearth.ttft.push(h.ttftMs);
    inProcess.ttft.push(p.ttftMs);
    if (long) {
      hearth.tokens += h.tokens;
      hearth.ms += h.totalMs;
      inProcess.tokens += p.tokens;
      inProcess.ms += p.totalMs;
    }
  }

  // Where the API's first token goes, stage by stage (stage D holds the prompt's evaluation).
  const stages =
    sizes.stageProbeRequests > 0
      ? await probeStages(ctx, body(1), Math.ceil(sizes.stageProbeRequests / 2), "overhead")
      : undefined;

  const hearthRate = (hearth.tokens / hearth.ms) * 1000;
  const localRate = (inProcess.tokens / inProcess.ms) * 1000;
  const h = summarize(hearth.ttft);
  const p = summarize(inProcess.ttft);
  const overheadP50 = h.p50 - p.p50;
  const overheadP99 = h.p99 - p.p99;
  // The prompt's evaluation varies by tens of ms from request to request on a shared VM;
  // the median of each pair's difference is the steadier estimate of what Hearth adds.
  const paired = summarize(pairedDifferences(hearth.ttft, inProcess.ttft));
  return {
    id: "overhead",
    title: `Overhead: 1 stream, ${sizes.overheadTokens} tokens, temperature 0 (API vs in-process)`,
    figures: [
      figure("tokens/s through the API (SSE)", round(hearthRate), "tok/s"),
      figure("tokens/s in-process", round(localRate), "tok/s"),
      figure("API ÷ in-process", round(hearthRate / localRate), "×"),
      figure("TTFT API p50", round(h.p50), "ms"),
      figure("TTFT API p99", round(h.p99), "ms"),
      figure("TTFT in-process p50", round(p.p50), "ms"),
      figure("TTFT in-process p99", round(p.p99), "ms"),
      figure("TTFT overhead p50 (API − in-process)", round(overheadP50), "ms"),
      figure("TTFT overhead p99 (API − in-process)", round(overheadP99), "ms"),
      figure("TTFT overhead, median of paired differences", round(paired.p50), "ms"),
      ...(stages ? [stages.summary] : []),
    ],
    targets: [
      target("API tokens/s ≥ 0.97 × in-process", round(hearthRate / localRate), ">=", 0.97, "×"),
      target("TTFT overhead p50", round(overheadP50), "<=", 5, "ms"),
      target("TTFT overhead p99", round(overheadP99), "<=", 20, "ms"),
    ],
    notes: [
      `tokens/s over ${sizes.overheadPairs} requests per side (request start to last token); ` +
        `TTFT over ${pairs} requests per side (${sizes.overheadTtftPairs} of them 1-token requests)`,
      ...(stages ? [`${stages.note}; the stages are those of the queue floor, D includes evaluating the prompt`] : []),
    ],
    details: {
      pairs,
      hearth: { tokens: hearth.tokens, ms: hearth.ms, ttftMs: hearth.ttft, ttft: h },
      inProcess: { tokens: inProcess.tokens, ms: inProcess.ms, ttftMs: inProcess.ttft, ttft: p },
      pairedTtftOverhead: paired,
      stages: stages?.details,
    },
  };
}
