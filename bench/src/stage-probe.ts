import { decodeMessages } from "../../src/requests/stream.js";
import { RedisMonitor } from "./redis-monitor.js";
import { figure, type BenchContext, type Figure } from "./scenario.js";
import { round, summarize, type Summary } from "./stats.js";

/**
 * Where a 1-token request's time goes, from outside Hearth: the bench sends requests one
 * at a time while a Redis MONITOR records every command of this run's key prefix with the
 * server's clock (same machine, same clock as the client's). Each request's commands
 * mark its stages:
 *
 *   client sends ──A──▶ API's first Redis command (queue depth check): HTTP in, API key and model lookups
 *                ──B──▶ job added (XADD "added")
 *                ──C──▶ a worker moved it to active (XADD "active"): pickup latency
 *                ──D──▶ first token published: payload check, context lease, tokenize, first evaluation
 *                ──E──▶ done published (0 where it went in the first token's message)
 *                ──F──▶ client has the whole answer: pub/sub to the API, response, HTTP out
 *
 * MONITOR itself slows Redis a little, so these requests are not part of the latency figures.
 */

export const STAGES = [
  ["A", "HTTP in + API key + model lookup"],
  ["B", "queue depth check + job add"],
  ["C", "worker pickup"],
  ["D", "worker: lease, tokenize, first token"],
  ["E", "worker: first token → done"],
  ["F", "pub/sub → API → HTTP out"],
] as const;

interface Command {
  at: number;
  source: string;
  args: string[];
}

export interface StageProbe {
  /** One figure per stage (p50). */
  figures: Figure[];
  /** All stages' p50 in one figure. */
  summary: Figure;
  note: string;
  details: { requests: number; attributed: number; stages: Record<string, Summary>; totalMs: Summary };
}

const wallNow = () => performance.timeOrigin + performance.now();

export async function probeStages(
  ctx: BenchContext,
  body: Record<string, unknown>,
  requests: number,
  label: string,
): Promise<StageProbe> {
  const commands: Command[] = [];
  const prefix = ctx.cluster.prefix;
  const monitor = await RedisMonitor.open(ctx.cluster.redisUrl, ({ at, source, args }) => {
    if (!args.some((a) => a.includes(prefix))) return;
    // Only a published message is read whole (its events mark stages D and E); the rest, their first characters.
    const published = args[0]?.toUpperCase() === "PUBLISH";
    commands.push({ at, source, args: published ? args : args.map((a) => a.slice(0, 120)) });
  });
  const windows: { sent: number; ended: number }[] = [];
  try {
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < requests; i++) {
      ctx.progress.step(`${label}: stage probe ${i + 1}/${requests} (Redis MONITOR)`);
      const sent = wallNow();
      await ctx.http.complete(body);
      windows.push({ sent, ended: wallNow() });
      // Let the worker finish the job's bookkeeping before the next request.
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    monitor.close();
  }

  const perStage = new Map<string, number[]>(STAGES.map(([id]) => [id, []]));
  const totals: number[] = [];
  for (const w of windows) {
    const stages = stagesOf(
      commands.filter((c) => c.at >= w.sent && c.at <= w.ended),
      w,
    );
    if (!stages) continue;
    for (const [id, ms] of Object.entries(stages)) perStage.get(id)!.push(ms);
    totals.push(w.ended - w.sent);
  }
  const summaries = Object.fromEntries([...perStage].map(([id, values]) => [id, summarize(values)]));
  const p50s = STAGES.map(([id]) => round(summaries[id]!.p50));
  return {
    figures: STAGES.map(([id, name], i) => figure(`stage ${id} p50: ${name}`, p50s[i]!, "ms")),
    summary: figure(
      `stages ${STAGES.map(([id]) => id).join("/")} p50 (1-token requests)`,
      round(p50s.reduce((a, b) => a + b, 0)),
      "ms",
      `${p50s.join(" / ")} ms`,
    ),
    note: `stages: ${totals.length} of ${requests} sequential requests attributed from Redis MONITOR (see docs/performance.md)`,
    details: { requests, attributed: totals.length, stages: summaries, totalMs: summarize(totals) },
  };
}

/** The stage durations of one request from the commands seen during it; undefined if a mark is missing. */
function stagesOf(commands: Command[], w: { sent: number; ended: number }): Record<string, number> | undefined {
  const event = (name: string) =>
    commands.find(
      (c) =>
        c.source === "lua" && c.args[0]?.toUpperCase() === "XADD" && c.args.includes(name) && c.args.includes("jobId"),
    );
  const added = event("added");
  if (!added) return undefined;
  const jobId = added.args[added.args.indexOf("jobId") + 1]!;
  const active = commands.find(
    (c) =>
      c.source === "lua" && c.args.includes("active") && c.args.includes(jobId) && c.args[0]?.toUpperCase() === "XADD",
  );
  // A message holds one event, or several of one turn (a 1-token request's token and done may share one).
  const published = (type: string) =>
    commands.find(
      (c) =>
        c.args[0]?.toUpperCase() === "PUBLISH" &&
        decodeMessages(c.args[2] ?? "").some((e) => e.id === jobId && e.type === type),
    );
  const token = published("token");
  const done = published("done");
  // The API connection is the one that ran the script that added the job.
  const adder = [...commands].reverse().find((c) => c.source !== "lua" && c.at <= added.at);
  const apiFirst = commands.find((c) => c.source === adder?.source);
  if (!active || !token || !done || !apiFirst) return undefined;
  return {
    A: apiFirst.at - w.sent,
    B: added.at - apiFirst.at,
    C: active.at - added.at,
    D: token.at - active.at,
    E: done.at - token.at,
    F: w.ended - done.at,
  };
}
