import type { Config } from "../config.js";
import type { Metering } from "./relayed-usage.js";
import type { RedisClient } from "../redis/connection.js";
import { decodeMessage, eventLogKey, LOG_META_ID, logEntryId, type SequencedEvent } from "./stream.js";

/** What a resumable request's log holds first (stream.ts LOG_META_ID): who may resume it, its job's queue, how to render it. */
export interface LogMeta {
  accountId: string;
  queue: string;
  view: unknown;
  /** Whom the request is metered to, should its worker die while a resumed stream relays it. */
  metering?: Metering;
}

/**
 * Resumable requests' logs in Redis, from the API's side: a log is started (its meta entry,
 * and its expiry) before the request's job exists, the worker appends each event to it
 * (stream.ts), and a resuming API process reads it back. Failures reject as Redis's own.
 */
export class RequestLogs {
  constructor(
    private readonly redis: RedisClient,
    private readonly options: Pick<Config, "redisPrefix" | "streamRetentionMs">,
  ) {}

  async start(requestId: string, meta: LogMeta): Promise<void> {
    const log = eventLogKey(this.options.redisPrefix, requestId);
    const results = await this.redis
      .multi()
      .xadd(log, LOG_META_ID, "m", JSON.stringify(meta))
      .pexpire(log, this.options.streamRetentionMs)
      .exec();
    // A transaction's commands fail one by one, in its answer, not as a rejection.
    const failed = results?.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  /** The log's meta entry; undefined once the log is gone (expired) or was never started. */
  async meta(requestId: string): Promise<LogMeta | undefined> {
    const [entry] = await this.redis.xrange(eventLogKey(this.options.redisPrefix, requestId), LOG_META_ID, LOG_META_ID);
    return entry ? (JSON.parse(entry[1][1]!) as LogMeta) : undefined;
  }

  /** The events logged so far, in order. */
  async events(requestId: string): Promise<SequencedEvent[]> {
    const entries = await this.redis.xrange(eventLogKey(this.options.redisPrefix, requestId), logEntryId(1), "+");
    return entries.map(([, fields]) => decodeMessage(fields[1]!)).filter((e) => e !== undefined);
  }
}
