import type { RedisClient } from "../redis/connection.js";

/**
 * Live workers, for readiness checks and the dashboard: each worker refreshes its
 * entry every few seconds; an entry not refreshed within the TTL no longer counts.
 */
export interface WorkerInfo {
  id: string;
  pid: number;
  host: string;
  /** The base models it serves (text role). */
  models: string[];
  /** What it serves: text, image or both (HEARTH_WORKER_ROLES). */
  roles: string[];
  /** Where its language models compute: "cpu", "cuda", "vulkan" or "metal"; absent without the text role. */
  backend?: string;
  /** The image models it serves (image role), with their backends. */
  imageModels: { id: string; backend: string }[];
  startedAt: string;
  /** When this entry was written (the heartbeat's time). */
  beatAt?: string;
  /**
   * Per base model served: the adapters loaded on it (their storage keys, least recently used
   * first), the requests running on it, and the sequences free for more, on the base model's
   * contexts and on those its adapters share, and how many jobs it takes at once from its own
   * queue of the model (placement, placement.ts).
   */
  serving?: {
    model: string;
    adapters: number;
    adapterKeys?: string[];
    /** The prefix keys (prompt-prefix.ts) of the last prompts it ran, which its prompt caches most likely hold. */
    prefixKeys?: string[];
    requests: number;
    freeSequences?: { base: number; adapters: number };
    slots?: number;
  }[];
}

// One hash tag: a heartbeat writes both in one transaction (one slot on a Redis Cluster).
const key = (prefix: string) => `${prefix}:{workers}`;
const infoKey = (prefix: string) => `${prefix}:{workers}:info`;

export async function announceWorker(redis: RedisClient, prefix: string, info: WorkerInfo, ttlMs: number) {
  await redis
    .multi()
    .zadd(key(prefix), Date.now() + ttlMs, info.id)
    .hset(infoKey(prefix), info.id, JSON.stringify(info))
    .exec();
}

export async function retireWorker(redis: RedisClient, prefix: string, id: string) {
  await redis.multi().zrem(key(prefix), id).hdel(infoKey(prefix), id).exec();
}

export async function liveWorkers(redis: RedisClient, prefix: string): Promise<WorkerInfo[]> {
  const now = Date.now();
  const ids = await redis.zrangebyscore(key(prefix), now, "+inf");
  // Forget entries of workers that died without retiring.
  await redis.zremrangebyscore(key(prefix), "-inf", now - 1);
  if (ids.length === 0) return [];
  const infos = await redis.hmget(infoKey(prefix), ...ids);
  return infos.flatMap((raw) => (raw ? [JSON.parse(raw) as WorkerInfo] : []));
}
