import { Redis, type RedisOptions } from "ioredis";
import type { Config } from "../config.js";

/**
 * Redis connections, by role. Producers (the API) fail fast so a request gets a
 * 503 instead of waiting on a dead Redis; workers and subscribers retry forever,
 * as BullMQ requires for blocking connections.
 */
export type ConnectionRole = "producer" | "worker" | "subscriber";

/**
 * A producer's commands also fail after `commandTimeoutMs` without an answer (a Redis that
 * stopped answering is a 503, not a hang); connections that block on purpose (BullMQ's
 * workers, subscribers) get no such limit.
 */
export function redisOptions(role: ConnectionRole, commandTimeoutMs?: number): RedisOptions {
  const common: RedisOptions = {
    lazyConnect: false,
    connectionName: `hearth-${role}`,
    // No CLIENT SETINFO on connect: written to a socket that dies while connecting, it ends
    // in an unhandled EPIPE rejection inside ioredis (seen when a test kills its Redis).
    disableClientInfo: true,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
  if (role === "producer") {
    return {
      ...common,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2_000,
      ...(commandTimeoutMs === undefined ? {} : { commandTimeout: commandTimeoutMs }),
    };
  }
  return { ...common, maxRetriesPerRequest: null, enableOfflineQueue: true };
}

export function createRedis(
  config: Pick<Config, "redisUrl"> & Partial<Pick<Config, "redisCommandTimeoutMs">>,
  role: ConnectionRole,
): Redis {
  const redis = new Redis(config.redisUrl, redisOptions(role, config.redisCommandTimeoutMs));
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  redis.on("error", () => {});
  return redis;
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
    };
    redis.on("ready", onReady);
  });
}
