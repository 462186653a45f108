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
 * What an API process relayed of a request, for its usage record when its worker dies: the
 * worker, which appends every other request's record, is gone, and the usage on the last event
 * of text relayed is what its client was sent (docs/usage.md, "Cut short"). A worker that dies
 * after its `done` came but before it appended its record leaves the answer's usage to record.
 */
export class RelayedUsage {
  private sent: Usage | undefined;
  private startedAt: number | undefined;
  private done: { usage: Usage; at: number } | undefined;

  constructor(private readonly metering: Metering | undefined) {}

  /** A worker took the request (or its first event came). */
  started(): void {
    this.startedAt ??= Date.now();
  }

  /** An event went to the client. */
  relayed(event: SequencedEvent): void {
    this.sent = usageSoFar(event) ?? this.sent;
    if (event.type === "done") this.done = { usage: event.usage, at: Date.now() };
  }

  /** Whether the request's answer went out whole and names someone to meter: its record is then the worker's to append. */
  get answered(): boolean {
    return this.metering !== undefined && this.done !== undefined;
  }

  /**
   * Appends the record of a request answered whole whose worker died before appending its own
   * (job-liveness.ts watches for that): finished, with its done's usage. Should the worker have
   * appended after all, the one the log held first counts.
   */
  async answeredUnmetered(redis: RedisClient, prefix: string, log: Logger | undefined): Promise<void> {
    if (!this.metering || !this.done) return;
    const { at } = this.done;
    const record = textRecord(this.metering.subject, this.done.usage, "finished", {
      startedAt: this.startedAt ?? at,
      endedAt: at,
    });
    log?.warn("the worker of an answered request died before it appended its usage record; appended here", {
      requestId: record.requestId,
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
