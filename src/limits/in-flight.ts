import type { RedisClient } from "../queues/connection.js";
import { callRedis } from "../queues/redis-call.js";

/**
 * The generation requests each account has queued or running, shared by every API process:
 * a sorted set per account of request IDs scored by their admission time. Admission checks
 * the cap and adds in one script; the end of a request removes it. Entries older than
 * `staleMs` are dropped first, so a request whose API process died is not counted for ever.
 */
const ADMIT = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1] - ARGV[2])
local count = redis.call('zcard', KEYS[1])
if count >= tonumber(ARGV[3]) then return -1 - count end
redis.call('zadd', KEYS[1], ARGV[1], ARGV[4])
redis.call('pexpire', KEYS[1], ARGV[2])
return count
`;

/** The longest a request counts as in flight (its API process may have died without releasing it). */
export const IN_FLIGHT_STALE_MS = 30 * 60_000;

export class InFlightRequests {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** How long an entry counts at most (the longest a request can live). */
    private readonly staleMs: number,
    /** Redis down or not answering within this: a 503 (redis-call.ts). */
    private readonly timeoutMs: number,
  ) {}

  /**
   * Counts the request in, unless the account already has `cap`: then null and the count. The
   * count before this one is what fair scheduling orders by (queues/priority in the caller).
   */
  async admit(accountId: string, requestId: string, cap: number): Promise<{ admitted: boolean; before: number }> {
    const key = this.key(accountId);
    const result = (await callRedis(this.redis, this.timeoutMs, () =>
      this.redis.eval(ADMIT, 1, key, Date.now(), this.staleMs, cap, requestId),
    )) as number;
    return result < 0 ? { admitted: false, before: -1 - result } : { admitted: true, before: result };
  }

  async release(accountId: string, requestId: string): Promise<void> {
    await callRedis(this.redis, this.timeoutMs, () => this.redis.zrem(this.key(accountId), requestId));
  }

  async count(accountId: string): Promise<number> {
    return callRedis(this.redis, this.timeoutMs, () => this.redis.zcard(this.key(accountId)));
  }

  private key(accountId: string): string {
    return `${this.prefix}:in-flight:${accountId}`;
  }
}
