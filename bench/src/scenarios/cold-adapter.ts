import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { pairedDifferences, round, summarize } from "../stats.js";

/**
 * 4. Cold adapter. (a) Deploy: time from the deploy request to DEPLOYED (conversion of the
 * PEFT upload included), then a request right away and a warm one after it. (b) Cold load:
 * the worker is restarted (a fresh process has loaded no adapter), and the first request
 * to each adapter is compared with the warm request that follows it.
 */
export async function coldAdapterScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { progress } = ctx;
  const adapters = ctx.coldAdapters;
  if (adapters.length === 0) throw new Error("the cold-adapter scenario needs undeployed adapters");
  const body = (model: string) => ({ model, prompt: ctx.prompt, max_tokens: 1, temperature: 0 });
  const ttft = async (model: string) => (await ctx.http.stream(body(model))).ttftMs;

  const deployMs: number[] = [];
  const afterDeploy: number[] = [];
  const warmAfterDeploy: number[] = [];
  for (const [i, adapter] of adapters.entries()) {
    progress.step(`cold adapter: deploying ${i + 1}/${adapters.length}`);
    deployMs.push(await ctx.deployments.deploy(adapter.modelId));
    afterDeploy.push(await ttft(adapter.name));
    warmAfterDeploy.push(await ttft(adapter.name));
  }

  progress.step("cold adapter: restarting the worker");
  await ctx.cluster.setWorkers(1, ctx.workerSettings);
  for (let i = 0; i < 3; i++) await ttft(ctx.bench.name);
  const cold: number[] = [];
  const warm: number[] = [];
  for (const [i, adapter] of adapters.entries()) {
    progress.step(`cold adapter: first request to unloaded adapter ${i + 1}/${adapters.length}`);
    cold.push(await ttft(adapter.name));
    warm.push(await ttft(adapter.name));
  }

  const deploy = summarize(deployMs);
  const penalty = summarize(pairedDifferences(cold, warm));
  const racing = summarize(pairedDifferences(afterDeploy, warmAfterDeploy));
  return {
    id: "cold-adapter",
    title: "Cold adapter: deploy → DEPLOYED, and the first request to an adapter no worker has loaded",
    figures: [
      figure("deploy → DEPLOYED p50 / max", round(deploy.p50), "ms", `${round(deploy.p50)} / ${round(deploy.max)} ms`),
      figure(
        "cold TTFT − warm TTFT p50 / max",
        round(penalty.p50),
        "ms",
        `${round(penalty.p50)} / ${round(penalty.max)} ms`,
      ),
      figure("warm TTFT p50", round(summarize(warm).p50), "ms"),
      figure("request right after DEPLOYED − warm, p50", round(racing.p50), "ms"),
    ],
    targets: [
      target("first request to an unloaded adapter − warm (p50)", round(penalty.p50), "<=", 250, "ms"),
      target("deploy → DEPLOYED (p50)", round(deploy.p50), "<=", 1000, "ms"),
    ],
    notes: [
      `${adapters.length} adapter(s) of rank 16; DEPLOYED polled every 5 ms; 1-token streamed requests; ` +
        "a deploy makes workers preload the adapter, so the request right after DEPLOYED may find it loading or loaded",
    ],
    details: {
      deployMs,
      afterDeployTtftMs: afterDeploy,
      warmAfterDeployTtftMs: warmAfterDeploy,
      coldTtftMs: cold,
      warmTtftMs: warm,
      deploy,
      penalty,
    },
  };
}
