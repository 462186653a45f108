import { readGgufHeader } from "../../../src/models/formats/gguf-reader.js";
import { ConversationClient, conversationOf, nonce, prose, type Sharing, sizeSystemPrompt } from "../conversations.js";
import type { WorkerSettings } from "../hearth-cluster.js";
import type { StreamTiming } from "../http-client.js";
import { kvBytesPerToken } from "../kv-cache.js";
import { runClients } from "../load.js";
import { metricSumsBy, metricsAfterHeartbeat } from "../metric-samples.js";
import { residentBytes } from "../process-stats.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

const MB = 1024 * 1024;
/** Context each sequence has beside the system prompt: template, user turn, answer, and the sizing's error. */
const ROOM = 512;
/** Seeds of the words: the shared system prompt's (each two-worker run's from the next ones), the prompts that share nothing. */
const SYSTEM_SEED = 20261201;
const LONE_SEED = 40261201;
/** Words of each prompt that shares nothing (throughput), after its nonce. */
const LONE_WORDS = 16;
const LOOKUPS = "hearth_worker_prompt_cache_lookups_total";

interface Sent {
  sharing: Sharing;
  round: number;
  timing: StreamTiming;
}

interface TwoWorkerRun {
  placement: "off" | "on";
  round: number;
  sent: StreamTiming[];
  /** Conversations each worker took (its prompt-cache lookups), most first. */
  perWorker: number[];
  /** The API's placements by reason. */
  placements: Record<string, number>;
}

interface ThroughputRun {
  cache: "on" | "off";
  round: number;
  tokens: number;
  wallMs: number;
  ttftP50: number;
}

/**
 * 15. Prompt caching (issue 29). One worker: rounds of conversations sent one after another, each
 * a system prompt of `prefixSystemTokens` tokens and a user turn of its own, the system prompt
 * shared by all, then with a nonce in front so that nothing is shared: time to first token, and
 * the cached fraction of prompt tokens (usage's cached_tokens). Two workers: the shared
 * conversations with placement off, then on. Nothing shared: concurrent streams of unique
 * prompts, the cache on, then off (HEARTH_PROMPT_CACHE_TOKENS=0). Memory: the worker's resident
 * set before and after the one-worker rounds, beside the KV cache's bytes per token from the
 * model file. Chat completions when the model has a chat template, else completions.
 */
export async function prefixScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const n = sizes.prefixConversations;
  const header = await readGgufHeader(ctx.bench.path);
  const chat = header.metadata.has("tokenizer.chat_template");
  const kvPerToken = kvBytesPerToken(header, ctx.bench.path);
  const least = Math.ceil((sizes.prefixSystemTokens + ROOM) / 256) * 256;
  const settings: WorkerSettings = {
    ...ctx.workerSettings,
    contextSize: Math.max(ctx.workerSettings.contextSize, least),
  };
  const client = new ConversationClient(ctx.http, ctx.bench.name, chat);
  const settle = () => new Promise((r) => setTimeout(r, 300));

  progress.step("prefix: one fresh worker, sizing the system prompt");
  await ctx.cluster.setWorkers(1, settings);
  const pid = ctx.cluster.workerPids[0]!;
  const sizing = await sizeSystemPrompt(client, sizes.prefixSystemTokens, SYSTEM_SEED);
  const system = prose(sizing.words, SYSTEM_SEED);
  await settle();
  const rssBefore = await residentBytes(pid);
  const one: Sent[] = [];
  for (let r = 1; r <= sizes.prefixRounds; r++) {
    for (const sharing of ["shared", "unique"] as const) {
      for (let i = 0; i < n; i++) {
        progress.step(`prefix: 1 worker, round ${r}/${sizes.prefixRounds}, ${sharing}, conversation ${i + 1}/${n}`);
        const timing = await client.send(conversationOf(system, sharing, `${r}`, i), sizes.prefixTokens);
        one.push({ sharing, round: r, timing });
      }
    }
  }
  await settle();
  const rssAfter = await residentBytes(pid);
  const two = await twoWorkers(ctx, client, settings, sizing.words);
  const throughput = await withoutSharing(ctx, client, settings);

  const shared = one.filter((s) => s.sharing === "shared").map((s) => s.timing);
  const unique = one.filter((s) => s.sharing === "unique").map((s) => s.timing);
  const ttftShared = summarize(shared.map((t) => t.ttftMs));
  const ttftUnique = summarize(unique.map((t) => t.ttftMs));
  const systemTokens = summarize(shared.map((t) => t.promptTokens)).p50 - sizing.emptyPromptTokens;
  const fraction = { one: cachedFraction(shared), off: placed(two, "off"), on: placed(two, "on") };
  const [rateOn, rateOff] = [tokensPerS(throughput, "on"), tokensPerS(throughput, "off")];
  // A conversation that reused under half its prompt (a common chat header at most) took a sequence
  // of its own, and keeps its cells there; the last `sequences` of them are still held.
  const held = one.filter((s) => s.timing.cachedTokens * 2 < s.timing.promptTokens).slice(-settings.sequences);
  const heldTokens = held.reduce((sum, s) => sum + s.timing.promptTokens + s.timing.tokens, 0);
  const rssDelta = rssAfter - rssBefore;
  const sharedKv = kvPerToken * settings.contextSize * settings.sequences;
  const split = (placement: "off" | "on") =>
    `${round(fraction[placement])} (conversations per worker: ${two
      .filter((t) => t.placement === placement)
      .map((t) => t.perWorker.join(" + "))
      .join(", ")})`;
  const placements = sumRecords(two.filter((t) => t.placement === "on").map((t) => t.placements));
  const { prefixStreams: streams, prefixStreamRequests: each, prefixStreamTokens: tokens } = sizes;

  return {
    id: "prefix",
    title: `Prompt caching: ${n} conversations with a ${round(systemTokens)}-token system prompt, shared or not`,
    figures: [
      figure("TTFT p50, shared system prompt", round(ttftShared.p50), "ms"),
      figure("TTFT p50, unique system prompts", round(ttftUnique.p50), "ms"),
      figure("cached fraction of prompt tokens, shared, 1 worker", round(fraction.one), ""),
      figure("cached fraction of prompt tokens, unique, 1 worker", round(cachedFraction(unique)), ""),
      figure("cached fraction, shared, 2 workers, placement off", round(fraction.off), "", split("off")),
      figure("cached fraction, shared, 2 workers, placement on", round(fraction.on), "", split("on")),
      figure("cached fraction, 2 workers without placement ÷ 1 worker", round(fraction.off / fraction.one), "×"),
      figure(`nothing shared, ${streams} streams: cache on`, round(rateOn), "tok/s"),
      figure(`nothing shared, ${streams} streams: cache off`, round(rateOff), "tok/s"),
      figure("KV cache per token (model file, F16)", kvPerToken, "B"),
      figure(
        "worker RSS before / after the one-worker rounds",
        round(rssAfter / MB),
        "MB",
        `${round(rssBefore / MB)} / ${round(rssAfter / MB)} MB`,
      ),
      figure("cells the cache held after them (estimate)", heldTokens, "tokens"),
      figure("the same cells at the KV cache's rate", round((heldTokens * kvPerToken) / MB), "MB"),
      figure("RSS added per cached token", round(rssDelta / heldTokens), "B"),
    ],
    targets: [
      target("TTFT p50 shared ÷ unique system prompt", round(ttftShared.p50 / ttftUnique.p50), "<=", 0.25, "×"),
      target("cached fraction, 2 workers with placement ÷ 1 worker", round(fraction.on / fraction.one), ">=", 0.9, "×"),
      target("throughput with nothing shared, cache on ÷ off", round(rateOn / rateOff), ">=", 0.97, "×"),
    ],
    notes: [
      `${chat ? "chat completions" : "completions (the model has no chat template)"}, greedy, ${sizes.prefixTokens} ` +
        `tokens each, one after another; system prompt sized for ${sizes.prefixSystemTokens} tokens at ` +
        `${round(sizing.tokensPerWord)} tokens per word (measured: p50 prompt tokens less those with an empty system ` +
        `prompt); each worker ${settings.sequences} sequences × ${settings.contextSize} tokens, ${settings.threads} thread(s)`,
      `1 worker: ${sizes.prefixRounds} round(s) of ${n} shared then ${n} unique conversations, on one fresh worker; ` +
        `2 workers: ${n} shared conversations per run, placement off then on (the API restarted), each run with a ` +
        `system prompt of its own, ${sizes.prefixPlacementRounds} round(s) pooled. Each worker's first conversation ` +
        "evaluates the whole prompt: with one system prompt, placement saves at most one prefill per extra worker",
      `nothing shared: ${streams} streams × ${each} requests of a nonce and ${LONE_WORDS} words, ${tokens} tokens ` +
        `each, on a fresh worker per run after one request per stream, cache on then off, ` +
        `${sizes.prefixStreamRounds} round(s) pooled`,
      `memory: cached cells live in the KV cache each sequence reserves (and makes resident) at start ` +
        `(${round(sharedKv / MB)} MB for the shared context); RSS (VmRSS) 300 ms after the last request, ` +
        `${round(rssDelta / MB)} MB apart: what the worker's heap and allocator take or give back between two reads ` +
        `outweighs the cells; cells held estimated as those of the last ${settings.sequences} conversations that ` +
        "reused under half their prompt (a unique one on a used sequence reuses the chat header's few cells)",
      `placements with placement on: ${
        Object.entries(placements)
          .map(([reason, count]) => `${count} ${reason}`)
          .join(", ") || "none counted"
      }`,
    ],
    details: {
      chat,
      sizing,
      contextSize: settings.contextSize,
      oneWorker: { ttftShared, ttftUnique, conversations: one.map(brief) },
      cachedFraction: { ...fraction, unique: cachedFraction(unique) },
      twoWorkers: two.map(({ sent, ...run }) => ({
        ...run,
        cachedFraction: cachedFraction(sent),
        conversations: sent.map((timing) => brief({ sharing: "shared", round: run.round, timing })),
      })),
      throughput,
      memory: { kvBytesPerToken: kvPerToken, sharedKvBytes: sharedKv, rssBefore, rssAfter, heldTokens },
    },
  };
}

/**
 * Two workers, started once: for each run the API restarts with placement off or on, and the
 * conversations share a system prompt of their own (as long as the one worker's, other words),
 * so that no worker holds any of it when the run begins, as if both were fresh.
 */
async function twoWorkers(
  ctx: BenchContext,
  client: ConversationClient,
  settings: WorkerSettings,
  words: number,
): Promise<TwoWorkerRun[]> {
  const { sizes, progress } = ctx;
  const runs: TwoWorkerRun[] = [];
  try {
    for (let r = 1; r <= sizes.prefixPlacementRounds; r++) {
      for (const placement of ["off", "on"] as const) {
        const label = `placement ${placement} (round ${r}/${sizes.prefixPlacementRounds})`;
        progress.step(`prefix: 2 workers, ${label}`);
        await ctx.cluster.restartApi({ HEARTH_PLACEMENT: placement === "on" ? "true" : "false" });
        if (ctx.cluster.workerPids.length !== 2) await ctx.cluster.setWorkers(2, settings);
        // The workers' counters go on from run to run: each run counts what changed.
        const before = metricSumsBy(await ctx.http.getText("/metrics"), LOOKUPS, "worker");
        const system = prose(words, SYSTEM_SEED + runs.length + 1);
        const sent: StreamTiming[] = [];
        for (let i = 0; i < sizes.prefixConversations; i++) {
          progress.step(`prefix: 2 workers, ${label}, conversation ${i + 1}/${sizes.prefixConversations}`);
          const conversation = conversationOf(system, "shared", `p${r}${placement}`, i);
          sent.push(await client.send(conversation, sizes.prefixTokens));
        }
        const after = await metricsAfterHeartbeat(ctx.http);
        const perWorker = Object.entries(metricSumsBy(after, LOOKUPS, "worker"))
          .map(([worker, lookups]) => lookups - (before[worker] ?? 0))
          .filter((lookups) => lookups > 0)
          .sort((a, b) => b - a);
        const placements = metricSumsBy(after, "hearth_placements_total", "reason");
        runs.push({ placement, round: r, sent, perWorker, placements });
      }
    }
  } finally {
    await ctx.cluster.restartApi({});
  }
  return runs;
}

/** Concurrent streams of prompts that share nothing, on a fresh worker per run, the cache on, then off. */
async function withoutSharing(
  ctx: BenchContext,
  client: ConversationClient,
  settings: WorkerSettings,
): Promise<ThroughputRun[]> {
  const { sizes, progress } = ctx;
  const { prefixStreams: streams, prefixStreamRequests: each, prefixStreamTokens: tokens } = sizes;
  const lone = (i: number) => ({
    system: `${nonce(LONE_SEED + i)} ${prose(LONE_WORDS, LONE_SEED + i)}`,
    user: `Question ${i}: go on.`,
  });
  const runs: ThroughputRun[] = [];
  for (let r = 1; r <= sizes.prefixStreamRounds; r++) {
    for (const cache of ["on", "off"] as const) {
      progress.step(
        `prefix: nothing shared, ${streams} streams, cache ${cache} (round ${r}/${sizes.prefixStreamRounds})`,
      );
      await ctx.cluster.setWorkers(1, cache === "on" ? settings : { ...settings, promptCacheTokens: 0 });
      await runClients(streams, 1, (c) => client.send(lone(-1 - c), 2));
      const { results, wallMs } = await runClients(streams, each, (c, k) => client.send(lone(c * each + k), tokens));
      const generated = results.reduce((sum, t) => sum + t.tokens, 0);
      runs.push({ cache, round: r, tokens: generated, wallMs, ttftP50: summarize(results.map((t) => t.ttftMs)).p50 });
    }
  }
  return runs;
}

function cachedFraction(timings: StreamTiming[]): number {
  const prompt = timings.reduce((sum, t) => sum + t.promptTokens, 0);
  return timings.reduce((sum, t) => sum + t.cachedTokens, 0) / prompt;
}

/** The cached fraction of the two-worker runs with placement off or on, pooled. */
function placed(runs: TwoWorkerRun[], placement: "off" | "on"): number {
  return cachedFraction(runs.filter((t) => t.placement === placement).flatMap((t) => t.sent));
}

/** Generated tokens per second of the runs with the cache on or off, pooled. */
function tokensPerS(runs: ThroughputRun[], cache: "on" | "off"): number {
  const mine = runs.filter((t) => t.cache === cache);
  return (mine.reduce((sum, t) => sum + t.tokens, 0) / mine.reduce((sum, t) => sum + t.wallMs, 0)) * 1000;
}

function sumRecords(records: Record<string, number>[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const record of records) for (const [key, n] of Object.entries(record)) sums[key] = (sums[key] ?? 0) + n;
  return sums;
}

function brief({ sharing, round: r, timing }: Sent) {
  const { ttftMs, promptTokens, cachedTokens } = timing;
  return { sharing, round: r, ttftMs, promptTokens, cachedTokens };
}
