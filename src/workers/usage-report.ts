import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import type { UsageOutcome, UsageRecord } from "../domain/usage.js";
import type { StreamEvent } from "../requests/stream.js";

type Done = Extract<StreamEvent, { type: "done" }>;

/**
 * A job's usage record (docs/usage.md), from what its worker produced: the `done` event's usage
 * (a cancelled request's done counts what was produced until it stopped), an image job's images
 * with the steps and pixels they were asked with. A job that failed before its done counts
 * nothing. Undefined for a job that names nobody to meter.
 */
export function usageRecordOf(
  payload: InferencePayload | ImagePayload,
  done: Done | undefined,
  outcome: UsageOutcome,
  startedAt: number,
  endedAt: number,
): UsageRecord | undefined {
  if (!payload.meter) return undefined;
  const usage = done?.usage;
  const images = done?.images?.length ?? 0;
  const params = "params" in payload ? payload.params : undefined;
  return {
    requestId: payload.requestId,
    ...payload.meter,
    model: payload.model.name,
    baseModelId: payload.model.baseModelId,
    ...(payload.model.adapter ? { adapter: payload.model.adapter.key } : {}),
    kind: "kind" in payload ? payload.kind : "image",
    promptTokens: usage?.promptTokens ?? 0,
    cachedTokens: usage?.cachedTokens ?? 0,
    completionTokens: usage?.completionTokens ?? 0,
    images,
    imageSteps: params ? images * params.steps : 0,
    imagePixels: params ? images * params.width * params.height : 0,
    startedAt,
    endedAt,
    outcome,
  };
}
