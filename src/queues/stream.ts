import type { Redis } from "ioredis";
import type { ErrorCode } from "../errors.js";
import { waitForRedis } from "./connection.js";

/**
 * The stream contract between workers and the API.
 *
 * Each API instance subscribes once, at start-up, to its own reply channel; every
 * job names that channel (`replyTo`) and its `requestId`. A worker publishes the
 * request's events there, in order, and always ends with `done` or `error`.
 * Cancels travel the other way on one channel all workers subscribe to.
 *
 * A `token` event carries the text of one or more consecutive tokens of one choice:
 * while a publish for the request is in flight, the worker merges the tokens that
 * follow into one event (reply-publisher.ts). Count generated tokens from `done`'s
 * usage, never from events.
 */

export type FinishReason = "stop" | "length" | "cancelled";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export type StreamEvent =
  /** The next text of choice `index`: one token's, or several tokens' concatenated. */
  | { type: "token"; index: number; text: string }
  /** Image jobs: `step` of `steps` done (over all samples). */
  | { type: "progress"; step: number; steps: number }
  | {
      type: "done";
      choices: { index: number; finishReason: FinishReason }[];
      usage: Usage;
      /** Embedding requests only: one vector per input, in input order. */
      embeddings?: number[][];
      /** Image requests only: each image's Redis key (queues/image-job.ts) and seed, in sample order. */
      images?: { blob: string; seed: number; finishReason: "SUCCESS" }[];
    }
  | { type: "error"; error: { code: ErrorCode; message: string; param: string | null } };

export type WireMessage = StreamEvent & { id: string };

/**
 * A running job's lease: the worker that runs a streamed job keeps `lease(prefix, requestId)`
 * alive (refreshed every LEASE_REFRESH_MS, expiring after LEASE_TTL_MS) from before its
 * first event to its last. The API that waits watches it: a lease it saw that is gone means
 * the worker died, and the request ends at once with an error instead of waiting for
 * BullMQ's stalled-job check (which, for inference, must never re-run it: the text would be
 * sent twice).
 */
export const LEASE_TTL_MS = 1_200;
export const LEASE_REFRESH_MS = 400;
export const LEASE_CHECK_MS = 250;
export const leaseKey = (prefix: string, requestId: string) => `${prefix}:lease:${requestId}`;

export const channels = {
  reply: (prefix: string, instanceId: string) => `${prefix}:reply:${instanceId}`,
  cancel: (prefix: string) => `${prefix}:cancel`,
};

export function encodeEvent(requestId: string, event: StreamEvent): string {
  return JSON.stringify({ id: requestId, ...event });
}

export function decodeMessage(message: string): WireMessage | undefined {
  try {
    const parsed = JSON.parse(message) as WireMessage;
    return typeof parsed?.id === "string" && typeof parsed.type === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export async function publishEvent(redis: Redis, replyTo: string, requestId: string, event: StreamEvent) {
  await redis.publish(replyTo, encodeEvent(requestId, event));
}

export async function publishCancel(redis: Redis, prefix: string, requestId: string) {
  await redis.publish(channels.cancel(prefix), requestId);
}

/** Calls `onCancel(requestId)` for every cancel published; resolves once subscribed. */
export async function subscribeCancels(subscriber: Redis, prefix: string, onCancel: (requestId: string) => void) {
  const channel = channels.cancel(prefix);
  subscriber.on("message", (ch: string, message: string) => {
    if (ch === channel) onCancel(message);
  });
  await waitForRedis(subscriber, 10_000);
  await subscriber.subscribe(channel);
}
