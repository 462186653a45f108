import { isCluster, type RedisClient } from "../redis/connection.js";

/** What one check of a key found: there, not there, or not known (Redis slow or away). */
export type LeaseCheck = 1 | 0 | undefined;

interface Watcher {
  keys: () => string[];
  onCheck: (found: LeaseCheck[]) => void;
}

/**
 * Whether the keys that tell an API process how its requests' workers are doing still exist
 * (a running job's lease, a job's BullMQ lock while its lease is not taken yet), read for all
 * of its requests at once every `periodMs`: one pipelined round trip per period on one Redis
 * server, each key once however many watch it; one command per key on a cluster (a pipeline
 * there must stay on one node). Checked one EXISTS per request per period, a flood of one
 * account's requests made these checks the API's largest Redis cost (docs/performance.md,
 * fairness).
 */
export class LeaseChecks {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly periodMs: number,
  ) {}

  /**
   * Calls `onCheck` each period with the readings of the keys `keys()` names then (it is asked
   * every period: what a request needs checked changes as it goes), until the returned
   * function is called.
   */
  watch(keys: () => string[], onCheck: (found: LeaseCheck[]) => void): () => void {
    const watcher = { keys, onCheck };
    this.watchers.add(watcher);
    // Unreferenced: the checks must not keep a process from exiting.
    this.timer ??= setInterval(() => void this.check(), this.periodMs).unref();
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0) {
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
      const watchers = [...this.watchers].map((w) => ({ watcher: w, keys: w.keys() }));
      const index = new Map<string, number>();
      for (const { keys } of watchers) for (const key of keys) if (!index.has(key)) index.set(key, index.size);
      const found = await this.read([...index.keys()]);
      for (const { watcher, keys } of watchers) {
        if (this.watchers.has(watcher)) watcher.onCheck(keys.map((key) => found[index.get(key)!]));
      }
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
