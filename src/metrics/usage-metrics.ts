import type { UsageRecord } from "../domain/usage.js";
import type { ApiMetrics } from "./api-metrics.js";

/**
 * The usage meter's records as Prometheus counters, by model and never by account (label
 * cardinality stays that of the models): the records the meter wrote first, so that summed
 * over the API processes each request counts once, as in the database.
 */
export function usageMetrics(metrics: ApiMetrics): (records: readonly UsageRecord[]) => void {
  return (records) => {
    for (const r of records) {
      metrics.usageRequests.labels(r.model, r.outcome).inc();
      metrics.usageTokens.labels(r.model, "prompt").inc(r.promptTokens);
      metrics.usageTokens.labels(r.model, "cached").inc(r.cachedTokens);
      metrics.usageTokens.labels(r.model, "completion").inc(r.completionTokens);
      if (r.images > 0) metrics.usageImages.labels(r.model).inc(r.images);
    }
  };
}
