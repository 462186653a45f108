import type { Config } from "../config.js";
import type { LaneChoices } from "./queue-lanes.js";
import type { InferenceObserver } from "./inference-observer.js";

/** The inference client's options: its settings as configured (config.ts), and its collaborators. */
export interface InferenceClientOptions
  extends Pick<
    Config,
    | "redisPrefix"
    | "queueTimeoutMs"
    | "maxQueueDepth"
    | "streamRetentionMs"
    | "firstTokenTimeoutMs"
    | "interTokenTimeoutMs"
    | "redisCommandTimeoutMs"
  > {
  lanes?: LaneChoices;
  observer?: InferenceObserver;
}
