import type { Logger } from "../logger.js";
import type { RedisClient } from "../redis/connection.js";
import { type SequencedEvent, type Usage, usageSoFar } from "./stream.js";
import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import { appendUsageOrLog, cutShortRecord, textRecord, type UsageSubject, usageSubjectOf } from "./usage-log.js";

/** Who a followed request's use is metered to, and whether its client reads a stream. */
export interface Metering {
  subject: UsageSubject;
  streamed: boolean;
}

/**
 * What an API process relayed of a request, for the usage records it appends: the answer's,
 * as its `done` comes (the worker appends the same record after publishing it, and the one the
 * log held first counts), so that an answer passed on is in the usage log whatever dies next;
 * and, when its worker dies, the usage on the last event of text relayed, which is what its
 * client was sent (docs/usage.md, "Who writes the record").
 */
export class RelayedUsage {
  private sent: Usage | undefined;
  private startedAt: number | undefined;

  constructor(private readonly metering: Metering | undefined) {}

  /** A worker took the request (or its first event came). */
  started(): void {
    this.startedAt ??= Date.now();
  }

  /** An event went to the client. */
  relayed(event: SequencedEvent): void {
    this.sent = usageSoFar(event) ?? this.sent;
  }

  /**
   * Appends the record of a request answered whole, from its `done`: finished, with the done's
   * counts. Resolves once appended (or once that failed, which the log says), never rejects.
   */
  async answered(
    done: Extract<SequencedEvent, { type: "done" }>,
    redis: RedisClient,
    prefix: string,
    log: Logger | undefined,
  ): Promise<void> {
    if (!this.metering) return;
    const at = Date.now();
    const record = textRecord(this.metering.subject, done.usage, "finished", {
      startedAt: this.startedAt ?? at,
      endedAt: at,
    });
    await appendUsageOrLog(redis, prefix, record, log);
  }

  /**
   * Appends the record of a request whose worker died, if it relayed any text (a request that
   * sent none produced nothing its client saw). A record the worker appended before it died
   * has the same request ID, so whichever the log held first is the one that counts.
   */
  async workerDied(redis: RedisClient, prefix: string, log: Logger | undefined): Promise<void> {
    if (!this.metering || !this.sent) return;
    const { subject, streamed } = this.metering;
    const now = Date.now();
    await appendUsageOrLog(
      redis,
      prefix,
      cutShortRecord(subject, this.sent, streamed, this.startedAt ?? now, now),
      log,
    );
  }
}

/** A metered request of text: its worker's death leaves its record to the API. */
export function meteringOf(payload: InferencePayload | ImagePayload): Metering | undefined {
  const subject = "kind" in payload ? usageSubjectOf(payload) : undefined;
  return subject && { subject, streamed: !("streamed" in payload && payload.streamed === false) };
}
