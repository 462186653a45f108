import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Config } from "../config.js";

/**
 * A connection to Hearth's Redis: one server (or a primary), or a Redis Cluster
 * (HEARTH_REDIS_CLUSTER). Every key Hearth and BullMQ use together in one command, script or
 * transaction shares a hash tag, so that it lives in one slot (docs/operations.md, "Redis keys").
 */
export type RedisClient = Redis | Cluster;

/**
 * Redis connections, by role. Producers (the API) fail fast so a request gets a
 * 503 instead of waiting on a dead Redis; workers and subscribers retry forever,
 * as BullMQ requires for blocking connections. A publisher is a worker's connection for
 * what its jobs write (stream events, leases, heartbeats): as a worker's, and it sends the
 * commands of one event-loop turn together (ioredis's auto-pipelining): the events published
 * in one turn leave in one write instead of one write each.
 */
export type ConnectionRole = "producer" | "worker" | "subscriber" | "publisher";

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
  return {
    ...common,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    ...(role === "publisher" ? { enableAutoPipelining: true } : {}),
  };
}

export function createRedis(
  config: Pick<Config, "redisUrl"> & Partial<Pick<Config, "redisCommandTimeoutMs" | "redisCluster">>,
  role: ConnectionRole,
): RedisClient {
  const options = redisOptions(role, config.redisCommandTimeoutMs);
  const redis: RedisClient = config.redisCluster
    ? new Cluster([config.redisUrl], {
        // REDIS_URL names one node; the client learns the others (and who holds which slot) from it.
        redisOptions: options,
        clusterRetryStrategy: options.retryStrategy,
        enableOfflineQueue: options.enableOfflineQueue,
        enableAutoPipelining: options.enableAutoPipelining ?? false,
        // A producer's cluster without an offline queue refuses a command sent to a node still
        // connecting, and ioredis's ready check (CLUSTER INFO to any node, sent as soon as the
        // slots are known) then failed and started over, with growing delays: a producer took
        // up to 11 s to be ready. Without the check it is ready once it knows the slots.
        ...(role === "producer" ? { maxRedirections: 4, enableReadyCheck: false } : {}),
      })
    : new Redis(config.redisUrl, options);
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  redis.on("error", () => {});
  return redis;
}

export const isCluster = (redis: RedisClient): redis is Cluster => (redis as Cluster).isCluster === true;

/**
 * A new connection like `redis`, for BullMQ: never auto-pipelined, whatever `redis` is (BullMQ
 * is not known to work with it: jobs went missing from their lists, taskforcesh/bullmq#457).
 */
export function queueConnection(redis: RedisClient): RedisClient {
  const override = { enableAutoPipelining: false };
  return isCluster(redis) ? redis.duplicate([], override) : redis.duplicate(override);
}

/** Every key matching `pattern`: on a cluster, from each primary (SCAN is per node). */
export async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes: Redis[] = isCluster(redis) ? redis.nodes("master") : [redis];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== "0");
  }
  return found;
}

/**
 * The subscribers of a (classic) pub/sub channel. PUBSUB NUMSUB counts a node's own
 * subscribers, and on a cluster a subscriber may be connected to any node, so there it is the
 * sum over every node.
 */
export async function subscribersOf(redis: RedisClient, channel: string): Promise<number> {
  const nodes: Redis[] = isCluster(redis) ? redis.nodes("all") : [redis];
  const counts = await Promise.all(
    nodes.map(async (node) => Number(((await node.pubsub("NUMSUB", channel)) as [string, number])[1])),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

const PUBLISH = "return redis.call('PUBLISH', ARGV[1], ARGV[2])";

/**
 * Publishes so that messages published under the same `routeKey` arrive in order. One server
 * keeps its order; a cluster client sends a command with no key to any node, and messages
 * published on two nodes may reach a subscriber in either order (seen: a request's tokens out of
 * order). So on a cluster the PUBLISH runs in a script declared on `routeKey`, on the node that
 * holds its slot. Resolves to the subscribers reached on that node.
 */
export async function publishInOrder(
  redis: RedisClient,
  routeKey: string,
  channel: string,
  message: string,
): Promise<number> {
  if (!isCluster(redis)) return redis.publish(channel, message);
  return (await redis.eval(PUBLISH, 1, routeKey, channel, message)) as number;
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: RedisClient, timeoutMs: number): Promise<void> {
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
