import type { RedisClient } from "../redis/connection.js";
import { jobs } from "../jobs/jobs.js";
import type { ProducerQueues } from "../jobs/producer-queues.js";
import { liveWorkers, type WorkerInfo } from "../jobs/worker-registry.js";

/**
 * Placement (docs/architecture.md): which queue a request goes to, by what the workers hold.
 * Each worker consumes its base model's shared queue and a queue of its own.
 *
 * - **Prefix.** A request whose prompt begins with a block that a worker ran last (its prefix
 *   key, jobs/prompt-prefix.ts, listed in the worker's heartbeat) goes to that worker's own
 *   queue, where its prompt cache likely holds those cells, so only the rest is evaluated.
 *   Base models' requests and adapters' alike; a base model's request no worker holds goes
 *   on as if placement were off (the caller's choice, the shared queue or the express lane).
 * - **Adapter.** Else a request for adapter X goes to the own queue of a worker that has X
 *   loaded (its heartbeat lists the adapters it has warm), and when none has, to the least
 *   loaded worker of the base model, which will load it. A cold choice is recorded in Redis,
 *   so that every API process sends X's next requests there too before the worker's next
 *   heartbeat lists X.
 *
 * A worker that holds the prefix or the adapter but is loaded well above the others is passed
 * over (bounded loads, below), so a popular prefix or adapter spreads to a second worker. A
 * worker's load is read fresh from Redis at each placement (its own queue's waiting and running
 * jobs), the rest from heartbeats at most `viewMs` old. The caller moves a placed request to
 * the shared queue when it has not started within its bound (InferenceClient), so placement
 * never adds more waiting than that, and a dead worker's queue strands nothing.
 */

export type PlacementReason =
  /** A worker whose heartbeat lists the prompt's prefix key: its prompt cache likely holds the prefix. */
  | "prefix"
  /** A worker whose heartbeat lists the adapter. */
  | "warm"
  /** The worker recorded for the adapter, which may not have sent a heartbeat since. */
  | "assigned"
  /** No worker had it: the least loaded one, now recorded for it. */
  | "least-loaded"
  /** Those that have it are over the load bound: the least loaded worker, which loads it too. */
  | "spilled"
  /**
   * The shared queue: no live worker reports the base model (or placement could not read
   * Redis), or a base model's request that no worker holds the prefix of.
   */
  | "shared";

export interface Placed {
  queueName: string;
  /** The worker whose own queue it is; absent for the shared queue. */
  workerId?: string;
  reason: PlacementReason;
}

export interface PlacementOptions {
  prefix: string;
  /** How old the heartbeats read may be (they are refreshed every 2 s). */
  viewMs?: number;
  /** How long a recorded choice stands without a heartbeat listing the adapter on that worker. */
  trustMs?: number;
  now?: () => number;
}

interface Candidate {
  worker: WorkerInfo;
  /** Its own queue's waiting jobs, and what it runs (the larger of its queue's active jobs and its heartbeat's requests). */
  waiting: number;
  running: number;
  slots: number;
  adapterKeys: Set<string>;
  prefixKeys: ReadonlySet<string>;
}

/**
 * A warm worker is passed over once its load reaches (1 + this) × the mean load (counting this
 * request): consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2018), so
 * that a popular adapter spreads to a second worker instead of queueing on one. 0.5 is HAProxy's
 * default (`hash-balance-factor 150`); a tighter bound spills popular adapters so often that
 * cold loads multiply with no better tail latency (docs/performance.md, placement).
 */
const LOAD_BALANCE = 0.5;

/** Records older than this are deleted when the next choice is written. */
const FORGET_AFTER_MS = 10 * 60_000;

/** Tagged like the model's queues (jobs.ts), so that one pipeline reads it and their lengths on a Redis Cluster. */
export const placementKey = (prefix: string, baseModelId: string) => `${prefix}:placement:{${baseModelId}}`;

export class Placement {
  private view: { at: number; workers: Promise<WorkerInfo[]> } | undefined;
  private readonly viewMs: number;
  private readonly trustMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisClient,
    private readonly queues: ProducerQueues,
    private readonly options: PlacementOptions,
  ) {
    this.viewMs = options.viewMs ?? 500;
    this.trustMs = options.trustMs ?? 15_000;
    this.now = options.now ?? Date.now;
  }

  /** Where a request goes: for a base model's request (no `adapterKey`), only a worker holding its prefix places it. */
  async place(baseModelId: string, adapterKey: string | undefined, prefixKey?: string): Promise<Placed> {
    const shared: Placed = { queueName: jobs.inference.queueName(baseModelId), reason: "shared" };
    const serving = (await this.workers()).flatMap((worker) => {
      const entry = worker.serving?.find((s) => s.model === baseModelId);
      return entry?.slots ? [{ worker, entry }] : [];
    });
    if (serving.length === 0) return shared;
    // A base model's prompt that no heartbeat lists costs no round trip: most long prompts are new.
    const held = prefixKey !== undefined && serving.some(({ entry }) => entry.prefixKeys?.includes(prefixKey));
    if (adapterKey === undefined && !held) return shared;
    const record = placementKey(this.options.prefix, baseModelId);
    const queues = serving.map(({ worker }) => this.queues.get(jobs.inference.queueName(baseModelId, worker.id)));
    const read = this.redis.pipeline().hgetall(record);
    for (const q of queues) read.llen(q.keys.wait!).zcard(q.keys.prioritized!).llen(q.keys.active!);
    const replies = await read.exec();
    if (!replies || replies.some(([error]) => error)) return shared;
    const values = replies.map(([, value]) => value);
    const now = this.now();
    const recorded = parseRecords(values[0] as Record<string, string>);
    const candidates: Candidate[] = serving.map(({ worker, entry }, i) => {
      const [wait, prioritized, active] = values.slice(1 + i * 3, 4 + i * 3) as number[];
      const adapterKeys = new Set(entry.adapterKeys ?? []);
      for (const [key, r] of recorded) if (r.workerId === worker.id && now - r.at < this.trustMs) adapterKeys.add(key);
      return {
        worker,
        waiting: wait! + prioritized!,
        running: Math.max(active!, entry.requests),
        slots: entry.slots!,
        adapterKeys,
        prefixKeys: new Set(entry.prefixKeys ?? []),
      };
    });

    const totalLoad = candidates.reduce((sum, c) => sum + load(c), 0);
    const bound = Math.ceil(((1 + LOAD_BALANCE) * (totalLoad + 1)) / candidates.length);
    if (prefixKey !== undefined) {
      const holding = candidates.filter((c) => c.prefixKeys.has(prefixKey) && load(c) < bound);
      if (holding.length > 0) return this.placed(baseModelId, mostFree(holding), "prefix");
    }
    if (adapterKey === undefined) return shared;
    const warm = candidates.filter((c) => c.adapterKeys.has(adapterKey));
    const within = warm.filter((c) => load(c) < bound);
    if (within.length > 0) {
      const best = mostFree(within);
      const listed = best.worker.serving?.find((s) => s.model === baseModelId)?.adapterKeys?.includes(adapterKey);
      return this.placed(baseModelId, best, listed ? "warm" : "assigned");
    }
    // Most free slots first; between equals, the one with the fewest adapters.
    const best = candidates.reduce((a, b) =>
      free(b) > free(a) || (free(b) === free(a) && b.adapterKeys.size < a.adapterKeys.size) ? b : a,
    );
    // A spill leaves the record to the adapter's first worker; heartbeats soon list both.
    if (warm.length > 0) return this.placed(baseModelId, best, warm.includes(best) ? "warm" : "spilled");
    const write = this.redis.multi().hset(record, adapterKey, `${best.worker.id} ${now}`);
    const forgotten = [...recorded].filter(([, r]) => now - r.at > FORGET_AFTER_MS).map(([key]) => key);
    if (forgotten.length > 0) write.hdel(record, ...forgotten);
    // A record that is not written only costs the next request a choice of its own.
    await write.exec().catch(() => {});
    return this.placed(baseModelId, best, "least-loaded");
  }

  private placed(baseModelId: string, c: Candidate, reason: PlacementReason): Placed {
    return { queueName: jobs.inference.queueName(baseModelId, c.worker.id), workerId: c.worker.id, reason };
  }

  /** The live workers, read at most every `viewMs`; none when Redis does not answer. */
  private workers(): Promise<WorkerInfo[]> {
    const now = this.now();
    if (!this.view || now - this.view.at >= this.viewMs) {
      this.view = { at: now, workers: liveWorkers(this.redis, this.options.prefix).catch(() => []) };
    }
    return this.view.workers;
  }
}

const load = (c: Candidate) => c.running + c.waiting;
const free = (c: Candidate) => c.slots - load(c);
const mostFree = (candidates: Candidate[]) => candidates.reduce((a, b) => (free(b) > free(a) ? b : a));

function parseRecords(hash: Record<string, string>): Map<string, { workerId: string; at: number }> {
  const records = new Map<string, { workerId: string; at: number }>();
  for (const [key, value] of Object.entries(hash ?? {})) {
    const [workerId, at] = value.split(" ");
    if (workerId && at && Number.isFinite(Number(at))) records.set(key, { workerId, at: Number(at) });
  }
  return records;
}
