import type { PlacementReason } from "./placement.js";

/**
 * Told how requests go, for metrics (metrics/inference-metrics.ts): enqueued, taken by a
 * worker, first token, and how each ended. Resumed requests are not told twice.
 */
export interface InferenceObserver {
  waiting(model: string): void;
  /** Where placement sent an adapter's request (`baseModelId` names the model's queues). */
  placed?(baseModelId: string, reason: PlacementReason): void;
  /** A placed request that its worker did not start in time, moved to the shared queue. */
  moved?(baseModelId: string): void;
  /** A request sent to the express lane, and one of those moved to the shared queue (not started in time). */
  expressed?(baseModelId: string): void;
  expressMoved?(baseModelId: string): void;
  started(model: string, queue: string, waitedMs: number): void;
  firstToken(model: string, sinceQueuedMs: number): void;
  ended(
    model: string,
    kind: string,
    outcome: "completed" | "failed" | "cancelled",
    generation: { completionTokens: number; ms: number } | undefined,
    wasRunning: boolean,
  ): void;
}
