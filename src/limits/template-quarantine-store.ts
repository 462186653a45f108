import type { RedisClient } from "../redis/connection.js";
import { callRedis } from "../redis/redis-call.js";
import type { QuarantineEntry, SharedQuarantine } from "../templates/template-quarantine.js";

/**
 * Quarantined chat templates in Redis, shared by every API and worker process: one key per
 * template's hash that expires with its quarantine. Redis down or slow is a 503 for a read
 * (callRedis); a write that fails leaves the quarantine local to its process.
 */
export class RedisQuarantineStore implements SharedQuarantine {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  async get(hash: string): Promise<QuarantineEntry | undefined> {
    const value = await callRedis(this.redis, this.timeoutMs, () => this.redis.get(this.key(hash)));
    return value ? (JSON.parse(value) as QuarantineEntry) : undefined;
  }

  async put(hash: string, entry: QuarantineEntry): Promise<void> {
    const ttlMs = entry.until - Date.now();
    if (ttlMs <= 0) return;
    await callRedis(this.redis, this.timeoutMs, () =>
      this.redis.set(this.key(hash), JSON.stringify(entry), "PX", ttlMs),
    );
  }

  private key(hash: string): string {
    return `${this.prefix}:template-quarantine:${hash}`;
  }
}
