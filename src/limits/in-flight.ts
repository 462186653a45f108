import type { RedisClient } from "../redis/connection.js";
import { callRedis } from "../redis/redis-call.js";

/**
 * The generation requests each account has queued or running, shared by every API process:
 * a sorted set per account of request IDs, each scored by when its API process last said it
 * still follows it (Redis's own clock, so that API hosts' clocks never matter). Admission drops
 * the entries not confirmed within `staleMs`, checks the cap and adds in one script; the end of
 * a request removes it. Each API process confirms its own requests every third of `staleMs`,
 * so a request that runs for an hour keeps counting, and the requests of an API process that
 * died (SIGKILL, a lost host: nothing released them) stop counting within `staleMs`.
 */
const NOW_MS = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const ADMIT = `${NOW_MS}
redis.call('zremrangebyscore', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local count = redis.call('zcard', KEYS[1])
if count >= tonumber(ARGV[2]) then return -1 - count end
redis.call('zadd', KEYS[1], now, ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[1])
return count
`;

/** Confirms members still in the set (XX: one released meanwhile is not added back). */
const CONFIRM = `${NOW_MS}
for i = 2, #ARGV do redis.call('zadd', KEYS[1], 'XX', now, ARGV[i]) end
redis.call('pexpire', KEYS[1], ARGV[1])
return 0
`;

/** Request IDs confirmed by one script at most (a cap may be in the hundreds of thousands). */
const CONFIRM_BATCH = 1000;

export interface InFlightOptions {
  /** How long an entry counts without its API process confirming it (HEARTH_IN_FLIGHT_STALE_MS). */
  staleMs: number;
  /** Redis down or not answering within this: a 503 (redis-call.ts). */
  timeoutMs: number;
}

export class InFlightRequests {
  /** The requests this process admitted and has not released, by account. */
  private readonly held = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly options: InFlightOptions,
  ) {}

  /**
   * Counts the request in, unless the account already has `cap`: then not admitted, with the
   * count. The count before this one is what fair scheduling orders by (the caller's priority).
   */
  async admit(accountId: string, requestId: string, cap: number): Promise<{ admitted: boolean; before: number }> {
    const { staleMs, timeoutMs } = this.options;
    const result = (await callRedis(this.redis, timeoutMs, () =>
      this.redis.eval(ADMIT, 1, this.key(accountId), staleMs, cap, requestId),
    )) as number;
    if (result < 0) return { admitted: false, before: -1 - result };
    const requests = this.held.get(accountId) ?? new Set();
    this.held.set(accountId, requests.add(requestId));
    this.timer ??= setInterval(() => void this.confirm(), Math.max(1, Math.floor(staleMs / 3))).unref();
    return { admitted: true, before: result };
  }

  async release(accountId: string, requestId: string): Promise<void> {
    const requests = this.held.get(accountId);
    requests?.delete(requestId);
    if (requests?.size === 0) this.held.delete(accountId);
    if (this.held.size === 0) this.stopConfirming();
    await callRedis(this.redis, this.options.timeoutMs, () => this.redis.zrem(this.key(accountId), requestId));
  }

  async count(accountId: string): Promise<number> {
    return callRedis(this.redis, this.options.timeoutMs, () => this.redis.zcard(this.key(accountId)));
  }

  /** Stops confirming (the process is closing; what it still holds goes stale). */
  close(): void {
    this.stopConfirming();
  }

  /**
   * One script per account holding requests here. A confirmation that fails (Redis slow or
   * away) is simply late: the next one comes a third of `staleMs` later.
   */
  private async confirm(): Promise<void> {
    if (this.redis.status !== "ready") return;
    const { staleMs, timeoutMs } = this.options;
    const calls: Promise<unknown>[] = [];
    for (const [accountId, requests] of this.held) {
      const ids = [...requests];
      for (let i = 0; i < ids.length; i += CONFIRM_BATCH) {
        const batch = ids.slice(i, i + CONFIRM_BATCH);
        const key = this.key(accountId);
        calls.push(
          callRedis(this.redis, timeoutMs, () => this.redis.eval(CONFIRM, 1, key, staleMs, ...batch)).catch(() => {}),
        );
      }
    }
    await Promise.all(calls);
  }

  private stopConfirming(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private key(accountId: string): string {
    return `${this.prefix}:in-flight:${accountId}`;
  }
}
