import { benchAccount } from "../bench-accounts.js";
import { BenchHttp } from "../http-client.js";
import { SteadyClient } from "../steady-client.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

/**
 * 9. Fairness between accounts (docs/security.md, fair scheduling): account A submits
 * `fairnessFlood` completions at once on hearth-tiny while account B sends one streamed request
 * a second. B's time to first token under A's flood is compared with B's alone, and A's
 * throughput with B beside it with A's alone. Each request queues with its account's number of
 * requests in flight as its priority, so B's request never waits behind A's backlog; and since
 * B has nothing else in flight while A's backlog waits, it goes to the express lane, where the
 * worker runs it at once on the base model's express context, beside the shared one
 * (HEARTH_EXPRESS_SEQUENCES).
 */
export async function fairnessScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress, cluster } = ctx;
  const admin = new BenchHttp(cluster.url, cluster.apiKey);
  const body = { model: ctx.tiny.name, prompt: ctx.prompt, max_tokens: sizes.loadTokens, temperature: 0 };
  const a = new BenchHttp(cluster.url, await benchAccount(admin, "bench-flood", sizes.fairnessFlood * 2));
  // B is a client of its own, in its own process: its times are not held up by the bench's work for A's flood.
  const b = await SteadyClient.start({ url: cluster.url, apiKey: await benchAccount(admin, "bench-steady", 16), body });
  try {
    // A warm-up flood and B's first requests, so that "alone" is not also "first" (or cold code).
    await flood(a, body, Math.min(50, sizes.fairnessFlood));
    await b.sequential(10);
    // Rounds of B alone, then A alone and A with B beside: each flood gives B only a few requests (one
    // a second), and B's requests alone are taken in each round as the floods leave the processes.
    const alone: number[] = [];
    const aAlone: Flood[] = [];
    const aBeside: Flood[] = [];
    const beside: number[] = [];
    for (let round = 1; round <= sizes.fairnessRounds; round++) {
      progress.step(`fairness: round ${round}/${sizes.fairnessRounds}, B alone (its time to first token unloaded)`);
      alone.push(...(await b.sequential(sizes.fairnessProbes)));
      // A flood leaves work behind it (garbage to collect, keys to expire): which flood comes
      // second alternates by round, so that neither side always follows the other.
      const floods = [
        async () => {
          progress.step(`fairness: round ${round}/${sizes.fairnessRounds}, A's ${sizes.fairnessFlood} requests alone`);
          aAlone.push(await flood(a, body, sizes.fairnessFlood));
        },
        async () => {
          progress.step(
            `fairness: round ${round}/${sizes.fairnessRounds}, A's ${sizes.fairnessFlood} requests, and B's one a second`,
          );
          aBeside.push(await floodBeside(a, b, body, sizes.fairnessFlood, beside));
        },
      ];
      if (round % 2 === 0) floods.reverse();
      for (const run of floods) await run();
    }

    // The counterfactual, measured: the same request sent with A's key during A's flood queues
    // behind A's backlog (its priority is A's count in flight), as every request would first come first served.
    progress.step("fairness: the same request queued as one of A's");
    const asA: number[] = [];
    const backlog = flood(a, body, sizes.fairnessFlood);
    await new Promise((r) => setTimeout(r, 200));
    asA.push((await a.stream(body)).ttftMs);
    await backlog;

    const unloaded = summarize(alone);
    const loaded = summarize(beside);
    const ratio = loaded.p50 / unloaded.p50;
    const throughputRatio = perSecond(aBeside) / perSecond(aAlone);
    const errors = [...aAlone, ...aBeside].reduce((sum, f) => sum + f.errors, 0);
    return {
      id: "fairness",
      title: `Fairness: account A floods ${sizes.fairnessFlood} requests, account B sends one a second`,
      figures: [
        figure(
          "B's TTFT alone p50 / p99",
          round(unloaded.p50),
          "ms",
          `${round(unloaded.p50)} / ${round(unloaded.p99)} ms`,
        ),
        figure(
          "B's TTFT under A's flood p50 / p99",
          round(loaded.p50),
          "ms",
          `${round(loaded.p50)} / ${round(loaded.p99)} ms`,
        ),
        figure("B's TTFT under the flood ÷ alone (p50)", round(ratio), "×"),
        figure("the same request queued behind A's backlog, TTFT", round(asA[0]!), "ms"),
        figure("A's throughput alone", round(perSecond(aAlone)), "requests/s"),
        figure("A's throughput with B beside ÷ alone", round(throughputRatio), "×"),
        figure("A's errors", errors, "requests"),
      ],
      targets: [
        target("B's TTFT under A's flood within 2× of alone (p50)", round(ratio), "<=", 2, "×"),
        target("A's throughput with B beside, of alone", round(throughputRatio), ">=", 0.9, "×"),
      ],
      notes: [
        `${loaded.n} requests of B during ${sizes.fairnessRounds} floods (A's alone and beside B alternate by round). The worker takes ${ctx.workerSettings.concurrency} of A's jobs at ` +
          `once; B's request, its account's only one in flight while A's backlog waits, goes to the express lane and runs ` +
          `at once on the worker's express context (${ctx.workerSettings.expressSequences} sequence(s)), beside the shared one.`,
        ...failureNotes([...aAlone, ...aBeside]),
      ],
      details: { alone, beside, asA, aAlone, aBeside },
    };
  } finally {
    admin.close();
    a.close();
    b.close();
  }
}

interface Flood {
  seconds: number;
  completed: number;
  errors: number;
  /** Why requests failed: each distinct message once, with how many failed so. */
  failures: Record<string, number>;
}

/** A's failed requests, by reason. */
function failureNotes(floods: Flood[]): string[] {
  const all: Record<string, number> = {};
  for (const f of floods) for (const [why, n] of Object.entries(f.failures)) all[why] = (all[why] ?? 0) + n;
  return Object.entries(all).map(([why, n]) => `A: ${n} request(s) failed: ${why}`);
}

/** Requests completed per second over several floods. */
function perSecond(floods: Flood[]): number {
  return floods.reduce((sum, f) => sum + f.completed, 0) / floods.reduce((sum, f) => sum + f.seconds, 0);
}

/**
 * A's flood with B's one streamed request a second beside it, B's times to first token added
 * to `ttfts`. B keeps its own clock: its first request goes at a random point of the flood's
 * first second, not in the same instant as A's requests (which would make every flood's first
 * request of B one that waits for the API to take in all of A's), nor on one of A's answers
 * (they come in bursts, as the sequences generating together end together, and B's requests
 * would be tied to those moments). A flood shorter than that (a short run's, on
 * a fast machine) would end before B sent anything, so B goes at the latest once a third of A's
 * requests have been answered.
 */
async function floodBeside(
  a: BenchHttp,
  b: SteadyClient,
  body: Record<string, unknown>,
  count: number,
  ttfts: number[],
): Promise<Flood> {
  let flooding = true;
  let steady: { stop(): Promise<number[]> } | undefined;
  const go = () => {
    if (flooding) steady ??= b.steady();
  };
  const timer = setTimeout(go, Math.random() * 1000);
  const latest = Math.ceil(count / 3);
  try {
    return await flood(a, body, count, (answered) => {
      if (answered === latest) go();
    });
  } finally {
    flooding = false;
    clearTimeout(timer);
    if (steady) ttfts.push(...(await steady.stop()));
  }
}

/**
 * `count` completions at once: how long they took, and how many failed. `onAnswer` hears the
 * number of requests answered so far (ok or not) after each answer.
 */
async function flood(
  client: BenchHttp,
  body: Record<string, unknown>,
  count: number,
  onAnswer?: (answered: number) => void,
): Promise<Flood> {
  const started = performance.now();
  let errors = 0;
  let answered = 0;
  const failures: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: count }, () =>
      client
        .complete(body)
        .catch((error: unknown) => {
          errors++;
          const message = error instanceof Error ? error.message : String(error);
          failures[message] = (failures[message] ?? 0) + 1;
        })
        .finally(() => onAnswer?.(++answered)),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, completed: count - errors, errors, failures };
}
