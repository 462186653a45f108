import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../errors.js";
import type { RedisClient } from "./connection.js";
import { callRedis } from "./redis-call.js";

const RELEASE = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
`;

const RENEW = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
`;

export interface RedisMutexOptions {
  /** How long a holder keeps the lock without renewing it (it renews while it works). */
  leaseMs: number;
  /** How long a caller waits for the lock before a 503. */
  waitMs: number;
  /** Redis down or not answering within this: a 503 (redis-call.ts). */
  timeoutMs: number;
}

/**
 * A lock shared by every API process, for the short steps that must not interleave across
 * processes (e.g. checking a quota and storing what it admits). One key per lock name, set
 * with NX to a token of the holder's; the holder renews its lease every third of it while
 * it works, and only the holder's token releases it. A holder that dies loses the lock
 * when its lease runs out. A waiter polls with a growing pause until `waitMs`, then gets a
 * 503 that says what was busy.
 *
 * Not a PostgreSQL advisory lock (db/advisory-locks.ts, for migrations and the bootstrap): those
 * last as long as a transaction, and these locks are held across storage I/O (an S3 copy), which
 * would keep a database connection in a transaction meanwhile, and with PGlite's one connection,
 * every other query of the process waiting.
 */
export class RedisMutex {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly options: RedisMutexOptions,
  ) {}

  /** Runs `fn` holding the lock `name`; `busy` is the 503's message if it cannot be had in time. */
  async run<T>(name: string, busy: string, fn: () => Promise<T>): Promise<T> {
    const { leaseMs, timeoutMs } = this.options;
    const key = `${this.prefix}:lock:${name}`;
    const token = randomUUID();
    await this.acquire(key, token, busy);
    const renewal = setInterval(
      () => void callRedis(this.redis, timeoutMs, () => this.redis.eval(RENEW, 1, key, token, leaseMs)).catch(() => {}),
      Math.max(1, Math.floor(leaseMs / 3)),
    ).unref();
    try {
      return await fn();
    } finally {
      clearInterval(renewal);
      // A release that fails leaves the lock to its lease.
      await callRedis(this.redis, timeoutMs, () => this.redis.eval(RELEASE, 1, key, token)).catch(() => {});
    }
  }

  private async acquire(key: string, token: string, busy: string): Promise<void> {
    const { leaseMs, waitMs, timeoutMs } = this.options;
    const deadline = performance.now() + waitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const set = await callRedis(this.redis, timeoutMs, () => this.redis.set(key, token, "PX", leaseMs, "NX"));
      if (set === "OK") return;
      if (performance.now() + pause > deadline) throw new AppError("unavailable", busy);
      await sleep(pause);
    }
  }
}
