import type { Config } from "../config.js";
import type { AdapterPlacement } from "./adapter-placement.js";
import type { InferenceObserver } from "./inference-observer.js";

export interface InferenceClientOptions {
  prefix: string;
  queueTimeoutMs: number;
  maxQueueDepth: number;
  /** How long a resumable request's events stay readable after its last one. */
  streamRetentionMs: number;
  /** Once a worker runs the request: the longest wait for its first event, and between two events. */
  firstTokenTimeoutMs: number;
  interTokenTimeoutMs: number;
  /** The longest wait for Redis to answer a command. */
  redisTimeoutMs: number;
  /** Adapter-aware placement, and the longest a placed request waits for its worker before it moves to the shared queue. */
  placement?: { placer: AdapterPlacement; waitMs: number };
  /**
   * Fair scheduling's express lane (docs/security.md): a base model's request from an account
   * with nothing else in flight (priority 1) goes to the model's express queue when the shared
   * queue has a backlog; workers keep sequences for it. Not started within `waitMs`, it moves to
   * the shared queue (where its priority still puts it first).
   */
  express?: { waitMs: number };
  observer?: InferenceObserver;
}

/** The client's options, as configured (config.ts). */
export function inferenceClientOptions(
  config: Pick<
    Config,
    | "redisPrefix"
    | "queueTimeoutMs"
    | "maxQueueDepth"
    | "streamRetentionMs"
    | "firstTokenTimeoutMs"
    | "interTokenTimeoutMs"
    | "redisCommandTimeoutMs"
  >,
): InferenceClientOptions {
  const { redisPrefix: prefix, queueTimeoutMs, maxQueueDepth, redisCommandTimeoutMs: redisTimeoutMs } = config;
  const { streamRetentionMs, firstTokenTimeoutMs, interTokenTimeoutMs } = config;
  return {
    prefix,
    queueTimeoutMs,
    maxQueueDepth,
    streamRetentionMs,
    firstTokenTimeoutMs,
    interTokenTimeoutMs,
    redisTimeoutMs,
  };
}
