import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { RedisClient } from "../queues/connection.js";
import { callRedis } from "../queues/redis-call.js";
import type { QuarantineEntry, SharedQuarantine } from "../templates/template-quarantine.js";
import { TemplateSandbox } from "../templates/template-sandbox.js";

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

/** A process's template sandbox (config.templates), its quarantines shared with every other process. */
export function sharedTemplateSandbox(
  config: Pick<Config, "templates" | "redisPrefix" | "redisCommandTimeoutMs">,
  redis: RedisClient,
  log: Logger,
): TemplateSandbox {
  return new TemplateSandbox(config.templates, {
    store: new RedisQuarantineStore(redis, config.redisPrefix, config.redisCommandTimeoutMs),
    onError: (error) => log.warn("could not share a template's quarantine", { error: String(error) }),
  });
}
