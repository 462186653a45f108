import type { RedisClient } from "../redis/connection.js";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { callRedis } from "../redis/redis-call.js";

/** The rates Hearth counts, each in one-minute windows shared by every API process (Redis). */
export type RateKind = "key-requests" | "account-requests" | "account-tokens" | "auth-failures" | "page-requests";

export interface WindowState {
  limit: number;
  remaining: number;
  /** Until the window starts again. */
  resetMs: number;
}

/** A window's state after a consume: within the limit, or past it. */
export type Consumed = WindowState & { allowed: boolean };

const WINDOW_SECONDS = 60;

/**
 * Fixed one-minute windows in Redis, by rate-limiter-flexible (its RateLimiterRedis: one
 * atomic INCRBY with its TTL per consume). One limiter per (kind, limit): the count lives in
 * Redis under the kind and the subject, so an account's new limit applies to the window
 * already counted.
 */
export class RateWindows {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** Redis down or not answering within this: a 503 (redis-call.ts), never a 500. */
    private readonly timeoutMs: number,
  ) {}

  /** Counts `points` against `subject`'s window; past `limit`, allowed is false (the points stay counted). */
  async consume(kind: RateKind, subject: string, points: number, limit: number): Promise<Consumed> {
    const limiter = this.limiter(kind, limit);
    const res = await this.call(() =>
      limiter.consume(subject, points).catch((refused: unknown) => {
        // The library refuses with the window's state; anything else is Redis failing.
        if (refused instanceof RateLimiterRes) return { refused };
        throw refused;
      }),
    );
    return "refused" in res
      ? { allowed: false, ...state(res.refused, limit) }
      : { allowed: true, ...state(res, limit) };
  }

  /** Gives points back (a refused request's estimate, an estimate above the real usage). */
  async refund(kind: RateKind, subject: string, points: number, limit: number): Promise<void> {
    if (points > 0) await this.call(() => this.limiter(kind, limit).reward(subject, points));
  }

  /** Counts points after the fact (usage above the estimate), whatever the window holds. */
  async charge(kind: RateKind, subject: string, points: number, limit: number): Promise<void> {
    if (points > 0) await this.call(() => this.limiter(kind, limit).penalty(subject, points));
  }

  /** The window as it stands, without counting anything. */
  async peek(kind: RateKind, subject: string, limit: number): Promise<WindowState> {
    const res = await this.call(() => this.limiter(kind, limit).get(subject));
    return res ? state(res, limit) : { limit, remaining: limit, resetMs: WINDOW_SECONDS * 1000 };
  }

  private call<T>(fn: () => Promise<T>): Promise<T> {
    return callRedis(this.redis, this.timeoutMs, fn);
  }

  private limiter(kind: RateKind, limit: number): RateLimiterRedis {
    const id = `${kind}/${limit}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.prefix}:rate:${kind}`,
        points: limit,
        duration: WINDOW_SECONDS,
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

function state(res: RateLimiterRes, limit: number): WindowState {
  return { limit, remaining: Math.max(0, limit - res.consumedPoints), resetMs: Math.max(0, res.msBeforeNext) };
}
