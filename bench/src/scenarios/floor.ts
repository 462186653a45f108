import { runClients } from "../load.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { probeStages } from "../stage-probe.js";
import { round, summarize } from "../stats.js";

/**
 * 2. Queue floor: what a request costs when the model costs nothing. 1-token completions
 * (not streamed) on hearth-tiny, one at a time and from 16 concurrent clients; then a few
 * more timed stage by stage (Redis MONITOR), and the HTTP and authentication floors.
 */
export async function floorScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const body = { model: ctx.tiny.name, prompt: "The ", max_tokens: 1, temperature: 0 };
  for (let i = 0; i < Math.max(sizes.warmup, 1) * 5; i++) {
    progress.step("floor: warm-up");
    await ctx.http.complete(body);
  }

  const sequential = await runClients(1, sizes.floorSequential, async (_, i) => {
    if (i % 10 === 0) progress.step(`floor: sequential ${i + 1}/${sizes.floorSequential}`);
    return ctx.http.complete(body);
  });
  const total = sizes.floorClients * sizes.floorRequestsPerClient;
  let finished = 0;
  progress.step(`floor: ${sizes.floorClients} concurrent clients, ${total} requests`);
  const concurrent = await runClients(sizes.floorClients, sizes.floorRequestsPerClient, async () => {
    const ms = await ctx.http.complete(body);
    if (++finished % 20 === 0) progress.step(`floor: ${sizes.floorClients} concurrent clients, ${finished}/${total}`);
    return ms;
  });

  // The floors under the floor: HTTP alone (no key, no database), and HTTP + API key lookup.
  const httpOnly: number[] = [];
  const withAuth: number[] = [];
  for (let i = 0; i < Math.min(sizes.floorSequential, 50); i++) {
    progress.step("floor: HTTP and authentication floors");
    httpOnly.push((await ctx.http.getJson("/healthz", false)).ms);
    withAuth.push((await ctx.http.getJson("/v1/whoami")).ms);
  }
  const stages =
    sizes.stageProbeRequests > 0 ? await probeStages(ctx, body, sizes.stageProbeRequests, "floor") : undefined;

  const seq = summarize(sequential.results);
  const conc = summarize(concurrent.results);
  const seqRate = (sequential.results.length / sequential.wallMs) * 1000;
  const concRate = (concurrent.results.length / concurrent.wallMs) * 1000;
  const http = summarize(httpOnly);
  const auth = summarize(withAuth);
  return {
    id: "floor",
    title: "Queue floor: 1-token completions on hearth-tiny (not streamed)",
    figures: [
      figure("sequential latency p50", round(seq.p50), "ms"),
      figure("sequential latency p99", round(seq.p99), "ms"),
      figure("sequential requests/s", round(seqRate), "req/s"),
      figure(`${sizes.floorClients} clients latency p50`, round(conc.p50), "ms"),
      figure(`${sizes.floorClients} clients latency p99`, round(conc.p99), "ms"),
      figure(`${sizes.floorClients} clients requests/s`, round(concRate), "req/s"),
      figure("GET /healthz p50 (HTTP only)", round(http.p50), "ms"),
      figure("GET /v1/whoami p50 (HTTP + API key)", round(auth.p50), "ms"),
      ...(stages?.figures ?? []),
    ],
    targets: [
      target("1-token request p50 (sequential)", round(seq.p50), "<=", 5, "ms"),
      target("1-token request p99 (sequential)", round(seq.p99), "<=", 15, "ms"),
    ],
    notes: [
      `${sizes.floorSequential} sequential requests; ${sizes.floorClients} clients × ${sizes.floorRequestsPerClient} requests`,
      ...(stages ? [stages.note] : []),
    ],
    details: {
      sequential: seq,
      sequentialRequestsPerS: seqRate,
      concurrent: conc,
      concurrentRequestsPerS: concRate,
      healthz: http,
      whoami: auth,
      stages: stages?.details,
    },
  };
}
