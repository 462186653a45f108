import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
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
  /** For what goes wrong beside a request (a usage record that could not be appended). */
  log?: Logger;
}
