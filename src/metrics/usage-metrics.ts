import type { UsageRecord } from "../domain/usage.js";
import type { ApiMetrics } from "./api-metrics.js";

/**
 * The usage meter's records as Prometheus counters, by model and never by account (label
 * cardinality stays that of the models): the records the meter wrote first, so that summed
 * over the API processes each request counts once, as in the database. Beside them, the meter's
 * batching (records per write) and how long after its request's end each record was written.
 */
export function usageMetrics(metrics: ApiMetrics): (records: readonly UsageRecord[]) => void {
  return (records) => {
    metrics.usageWriteRecords.observe(records.length);
    const now = Date.now();
    for (const r of records) {
      metrics.usageWriteDelay.observe(Math.max(0, now - r.endedAt) / 1000);
      metrics.usageRequests.labels(r.model, r.outcome).inc();
      metrics.usageTokens.labels(r.model, "prompt").inc(r.promptTokens);
      metrics.usageTokens.labels(r.model, "cached").inc(r.cachedTokens);
      metrics.usageTokens.labels(r.model, "completion").inc(r.completionTokens);
      if (r.images > 0) metrics.usageImages.labels(r.model).inc(r.images);
    }
  };
}
