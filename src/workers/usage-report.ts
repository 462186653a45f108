import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import type { UsageOutcome, UsageRecord } from "../domain/usage.js";
import type { StreamEvent, Usage } from "../requests/stream.js";
import { cutShortRecord, textRecord, usageSubjectOf } from "../requests/usage-log.js";

type Done = Extract<StreamEvent, { type: "done" }>;

const NOTHING: Usage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };

/**
 * A job's usage record (docs/usage.md), from what its worker produced: the `done` event's usage
 * (a cancelled request's done counts what was produced until it stopped), an image job's images
 * with the steps and pixels they were asked with. A job with no done counts from `sent`, the
 * usage on its last event of text: all of it when cancelled, what its client was sent when it
 * failed (usage-log.ts cutShortRecord); nothing when it sent no text. Undefined for a job that
 * names nobody to meter.
 */
export function usageRecordOf(
  payload: InferencePayload | ImagePayload,
  done: Done | undefined,
  sent: Usage | undefined,
  outcome: UsageOutcome,
  startedAt: number,
  endedAt: number,
): UsageRecord | undefined {
  const subject = usageSubjectOf(payload);
  if (!subject) return undefined;
  const times = { startedAt, endedAt };
  if (!done) {
    if (outcome !== "failed") return textRecord(subject, sent ?? NOTHING, outcome, times);
    const streamed = !("streamed" in payload && payload.streamed === false);
    return cutShortRecord(subject, sent ?? NOTHING, streamed, startedAt, endedAt);
  }
  const images = done.images?.length ?? 0;
  const params = "params" in payload ? payload.params : undefined;
  return {
    ...textRecord(subject, done.usage, outcome, times),
    images,
    imageSteps: params ? images * params.steps : 0,
    imagePixels: params ? images * params.width * params.height : 0,
  };
}
