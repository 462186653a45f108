import type { RedisClient } from "./connection.js";
import { AppError } from "../errors.js";
import { withTimeout } from "../process/with-timeout.js";

/**
 * Runs a producer's Redis command: a connection that is down, or does not answer within
 * `timeoutMs`, becomes a 503 (the request may be retried), never a hang or a 500.
 */
export async function callRedis<T>(redis: RedisClient, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  if (redis.status !== "ready") throw queueUnavailable();
  try {
    return await withTimeout(fn(), timeoutMs);
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    throw queueUnavailable(cause);
  }
}

/** The error a request gets when the queue's Redis is down or does not answer. */
export function queueUnavailable(cause?: unknown): AppError {
  return new AppError("unavailable", "The queue (Redis) is unavailable; please retry shortly.", { cause });
}
