import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import type { UsageRecord } from "../domain/usage.js";
import { isCutShort, type StreamEvent, type Usage, usageSoFar } from "../requests/stream.js";
import { cutShortRecord, textRecord, usageSubjectOf } from "../requests/usage-log.js";

type Done = Extract<StreamEvent, { type: "done" }>;

const NOTHING: Usage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };

/** How a job ended, for its record. */
export interface JobEnding {
  /** Its cancel signal fired: the client left or asked to stop, or nobody listened (`orphaned`). */
  cancelled: boolean;
  /** Cancelled because no API process listened on its route any more: one died (streamed-job.ts). */
  orphaned: boolean;
  startedAt: number;
  endedAt: number;
}

/**
 * A job's usage as its worker sees it, for its record (docs/usage.md): its `done` event, the
 * usage on its last event of text produced, and on the last one an API process received.
 */
export class JobUsage {
  private done: Done | undefined;
  private produced: Usage | undefined;
  private delivered: Usage | undefined;
  /** Whether the done event reached an API process (undefined: not published, or its publish failed). */
  private doneDelivered: boolean | undefined;

  constructor(private readonly payload: InferencePayload | ImagePayload) {}

  /** An event the work emitted. */
  emitted(event: StreamEvent): void {
    if (event.type === "done") this.done = event;
    this.produced = usageSoFar(event) ?? this.produced;
  }

  /** An event was published, to `receivers` API processes; resolves to that number. */
  published(event: StreamEvent, receivers: number): number {
    if (event.type === "done") this.doneDelivered = receivers > 0;
    const usage = usageSoFar(event);
    if (receivers > 0 && usage && usage.completionTokens >= (this.delivered?.completionTokens ?? 0)) {
      this.delivered = usage;
    }
    return receivers;
  }

  /**
   * The job's record; undefined for a job that names nobody to meter. Complete: its done's
   * usage, with an image job's images and the steps and pixels they were asked with. Cancelled
   * by its client: all it produced, until it stopped. Failed (an error, or its API process gone:
   * orphaned, or its done published to no API process): what an API process received of it
   * (usage-log.ts cutShortRecord).
   */
  record(ending: JobEnding): UsageRecord | undefined {
    const subject = usageSubjectOf(this.payload);
    if (!subject) return undefined;
    const { done, payload } = this;
    const times = { startedAt: ending.startedAt, endedAt: ending.endedAt };
    if (done && !isCutShort(done) && this.doneDelivered !== false) {
      const images = done.images?.length ?? 0;
      const params = "params" in payload ? payload.params : undefined;
      return {
        ...textRecord(subject, done.usage, "finished", times),
        images,
        imageSteps: params ? images * params.steps : 0,
        imagePixels: params ? images * params.width * params.height : 0,
      };
    }
    if (ending.cancelled && !ending.orphaned) {
      return textRecord(subject, done?.usage ?? this.produced ?? NOTHING, "cancelled", times);
    }
    const streamed = !("streamed" in payload && payload.streamed === false);
    return cutShortRecord(subject, this.delivered ?? NOTHING, streamed, ending.startedAt, ending.endedAt);
  }
}
