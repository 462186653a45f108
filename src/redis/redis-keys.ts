import { Redis } from "ioredis";

/**
 * Removes every key matching `pattern` (e.g. `<prefix>:*`), so a run under a prefix of its
 * own (tests, benchmarks) leaves a shared Redis as it was. Best effort: a Redis that is gone
 * (or was stopped on purpose) is not an error.
 */
export async function deleteRedisKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    disableClientInfo: true,
    retryStrategy: () => null,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } catch {
    // nothing more to do
  } finally {
    redis.disconnect();
  }
}
