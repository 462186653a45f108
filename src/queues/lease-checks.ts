import { isCluster, type RedisClient } from "./connection.js";

/** What one check of a lease found: held, not held, or not known (Redis slow or away). */
export type LeaseCheck = 1 | 0 | undefined;

/**
 * Whether workers still hold the leases of the requests an API process follows, read for all
 * of them at once every `periodMs`: one pipelined round trip per period on one Redis server,
 * one command per lease on a cluster (a pipeline there must stay on one node). Checked one
 * EXISTS per request per period, a 500-request flood made these checks the API's largest Redis
 * cost (8 % of its CPU time in the bench's fairness scenario).
 */
export class LeaseChecks {
  private readonly watched = new Map<string, Set<(held: LeaseCheck) => void>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly periodMs: number,
  ) {}

  /** Calls `onCheck` with each period's reading of `key` until the returned function is called. */
  watch(key: string, onCheck: (held: LeaseCheck) => void): () => void {
    const callbacks = this.watched.get(key) ?? new Set();
    this.watched.set(key, callbacks);
    callbacks.add(onCheck);
    this.timer ??= setInterval(() => void this.check(), this.periodMs);
    return () => {
      callbacks.delete(onCheck);
      if (callbacks.size === 0 && this.watched.get(key) === callbacks) this.watched.delete(key);
      if (this.watched.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** One period's reading; skipped while the previous one is still waiting for Redis. */
  private async check(): Promise<void> {
    // Losing Redis ends the requests by itself (reply-hub.ts).
    if (this.checking || this.redis.status !== "ready") return;
    this.checking = true;
    try {
      const keys = [...this.watched.keys()];
      const held = await this.read(keys);
      keys.forEach((key, i) => {
        for (const onCheck of [...(this.watched.get(key) ?? [])]) onCheck(held[i]);
      });
    } finally {
      this.checking = false;
    }
  }

  private async read(keys: string[]): Promise<LeaseCheck[]> {
    const redis = this.redis;
    if (isCluster(redis)) {
      return Promise.all(keys.map((key) => redis.exists(key).then(asCheck, () => undefined)));
    }
    const replies = await redis
      .pipeline(keys.map((key) => ["exists", key]))
      .exec()
      .catch(() => null);
    return keys.map((_, i) => {
      const reply = replies?.[i];
      return reply && !reply[0] ? asCheck(reply[1] as number) : undefined;
    });
  }
}

const asCheck = (exists: number): LeaseCheck => (exists > 0 ? 1 : 0);
