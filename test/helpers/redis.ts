import { Redis } from "ioredis";

/** Leaves the shared Redis as it was: removes every key a test instance made. */
export async function deleteRedisKeys(url: string, pattern: string) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } catch {
    // Redis may be the one a test stopped on purpose.
  } finally {
    redis.disconnect();
  }
}
