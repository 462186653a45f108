import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { kvCacheBytes } from "../kv-cache.js";
import { residentBytes } from "../process-stats.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round } from "../stats.js";

const MB = 1024 * 1024;

/**
 * 5. Memory: the resident set of a fresh worker process with the base model (after one
 * request), then after 1-token requests to more and more distinct adapters. The first
 * adapter also creates the contexts all adapters share; each adapter loads its weights.
 * Compared per adapter, from the first adapter to the last, with what one should cost at
 * most: the converted adapter file plus its share of the shared contexts' KV cache.
 */
export async function memoryScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const most = Math.max(...sizes.memoryLevels);
  if (ctx.adapters.length < most) throw new Error(`${most} adapters are needed, ${ctx.adapters.length} are deployed`);
  progress.step("memory: starting a fresh worker");
  await ctx.cluster.setWorkers(1, ctx.workerSettings);
  const pid = ctx.cluster.workerPids[0]!;
  const request = (model: string) => ctx.http.stream({ model, prompt: ctx.prompt, max_tokens: 1, temperature: 0 });
  const settle = () => new Promise((r) => setTimeout(r, 300));

  await request(ctx.bench.name);
  await settle();
  const rss: { adapters: number; bytes: number }[] = [{ adapters: 0, bytes: await residentBytes(pid) }];
  for (let loaded = 1; loaded <= most; loaded++) {
    progress.step(`memory: loading adapter ${loaded}/${most}`);
    await request(ctx.adapters[loaded - 1]!);
    if (sizes.memoryLevels.includes(loaded)) {
      await settle();
      rss.push({ adapters: loaded, bytes: await residentBytes(pid) });
    }
  }

  const adapterBytes = await largestArtifact(ctx.cluster.storageDir);
  const { adapterContexts, adapterSequences, contextSize } = ctx.workerSettings;
  const sharedKv = adapterContexts * (await kvCacheBytes(ctx.bench.path, { sequences: adapterSequences, contextSize }));
  const first = rss[1]!;
  const last = rss[rss.length - 1]!;
  const kvShare = sharedKv / last.adapters;
  const bound = adapterBytes + kvShare;
  // From the first adapter (which also made the shared contexts) to the last; with one level
  // only, from none (the shared contexts counted against that adapter).
  const from = last.adapters > first.adapters ? first : rss[0]!;
  const perAdapter = (last.bytes - from.bytes) / (last.adapters - from.adapters);
  const figures: Figure[] = rss.map((r) =>
    figure(
      r.adapters === 0 ? "worker RSS, base model" : `worker RSS, ${r.adapters} adapter(s) loaded`,
      round(r.bytes / MB),
      "MB",
    ),
  );
  for (let i = 2; i < rss.length; i++) {
    const [a, b] = [rss[i - 1]!, rss[i]!];
    figures.push(
      figure(
        `per adapter, ${a.adapters} → ${b.adapters}`,
        round((b.bytes - a.bytes) / (b.adapters - a.adapters) / MB),
        "MB",
      ),
    );
  }
  figures.push(
    figure("the first adapter, with the shared contexts", round((first.bytes - rss[0]!.bytes) / MB), "MB"),
    figure(`per adapter, ${from.adapters} → ${last.adapters}`, round(perAdapter / MB), "MB"),
    figure(
      `bound: adapter file + its share of the shared KV cache (over ${last.adapters})`,
      round(bound / MB),
      "MB",
      `${round(bound / MB)} MB (${round(adapterBytes / MB)} + ${round(sharedKv / MB)} ÷ ${last.adapters})`,
    ),
  );
  return {
    id: "memory",
    title: "Memory: worker resident set with the base model and with adapters loaded",
    figures,
    targets: [target("RSS added per loaded adapter", round(perAdapter / MB), "<=", round(bound / MB), "MB")],
    notes: [
      `the adapters share ${ctx.workerSettings.adapterContexts} contexts of ${ctx.workerSettings.adapterSequences} sequences × ` +
        `${ctx.workerSettings.contextSize} tokens of KV cache (F16); RSS read from /proc/<pid>/status 300 ms after the request`,
    ],
    details: { rss, adapterBytes, sharedKvBytes: sharedKv, perAdapterBytes: perAdapter },
  };
}

/** Size of the converted adapter files (they all have the same shape here). */
async function largestArtifact(storageDir: string): Promise<number> {
  const dir = path.join(storageDir, "artifacts", "lora");
  const sizes = await Promise.all((await readdir(dir)).map(async (name) => (await stat(path.join(dir, name))).size));
  return Math.max(0, ...sizes);
}
