import type { InferenceObserver } from "../requests/inference-observer.js";
import type { ApiMetrics } from "./api-metrics.js";

/** The inference client's observer that keeps the API's request metrics. */
export function inferenceMetrics(metrics: ApiMetrics): InferenceObserver {
  const requests = metrics.modelRequests;
  return {
    waiting: (model) => requests.labels(model, "waiting").inc(),
    placed: (baseModelId, reason) => metrics.placements.labels(baseModelId, reason).inc(),
    moved: (baseModelId) => metrics.placementMoves.labels(baseModelId).inc(),
    expressed: (baseModelId) => metrics.expressRequests.labels(baseModelId, "sent").inc(),
    expressMoved: (baseModelId) => metrics.expressRequests.labels(baseModelId, "moved").inc(),
    started(model, queue, waitedMs) {
      requests.labels(model, "waiting").dec();
      requests.labels(model, "running").inc();
      metrics.queueWait.labels(queue).observe(waitedMs / 1000);
    },
    firstToken: (model, ms) => metrics.timeToFirstToken.labels(model).observe(ms / 1000),
    ended(model, kind, outcome, generation, wasRunning) {
      requests.labels(model, wasRunning ? "running" : "waiting").dec();
      metrics.requests.labels(kind, outcome).inc();
      if (generation && generation.ms > 0 && generation.completionTokens > 1) {
        metrics.tokensPerSecond.labels(model).observe(generation.completionTokens / (generation.ms / 1000));
      }
    },
  };
}
