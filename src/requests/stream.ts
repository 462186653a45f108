import type { TokenLogprob } from "../domain/logprobs.js";
import type { RedisClient } from "../redis/connection.js";
import type { ErrorCode } from "../errors.js";
import { publishInOrder, subscribersOf, waitForRedis } from "../redis/connection.js";

/**
 * The stream contract between workers and the API.
 *
 * Each API instance subscribes once, at start-up, to its own reply channel; every
 * job names that channel (`replyTo`) and its `requestId`. A worker publishes the
 * request's events there, in order, and always ends with `done` or `error`.
 * Cancels travel the other way on one channel all workers subscribe to.
 *
 * Every event of a request has a sequence number (`seq`, from 1), which the API sends as
 * the SSE `id:`. A streamed request's events are also kept, for a while, in a Redis Stream
 * (its event log) so that a client can resume it on any API process (`resumeStream` in
 * inference-client.ts); that process then takes the request's route (`routeKey`), and the
 * worker publishes the rest to its channel instead. Appending to the log, reading the route
 * and publishing are one script, so a resume that reads the log after taking the route
 * misses nothing: what is not in its read arrives live (and what is in both is dropped by
 * `seq`).
 *
 * A `token` event carries the text of one or more consecutive tokens of one choice:
 * while a publish for the request is in flight, the worker merges the tokens that
 * follow into one event (reply-publisher.ts), which keeps the later one's `usage` (the
 * request's usage so far). Count a finished request's tokens from `done`'s usage.
 *
 * A request that asked for logprobs has them on its token events: the tokens whose text the
 * event completes (docs/api.md, "Log probabilities"; workers/engine/logprob-ledger.ts says how
 * they line up with the text). Merging concatenates them, up to MAX_LOGPROB_TOKENS_PER_EVENT.
 */

/** "tool_calls": a chat answer that ended with tool calls. */
export type FinishReason = "stop" | "length" | "tool_calls" | "cancelled";

export interface Usage {
  promptTokens: number;
  /**
   * Of the prompt tokens, those the worker did not evaluate again: their KV cells were left by
   * an earlier request (prompt caching). Absent: none (embeddings, images).
   */
  cachedTokens?: number;
  completionTokens: number;
}

/**
 * On an event of generated text: the request's usage by the time its text was generated (the
 * prompts read, the tokens generated over all choices, up to the token that completed its text).
 * A request cut short is metered from the last one its client received (docs/usage.md).
 */
interface SoFar {
  usage?: Usage;
}

export type StreamEvent =
  /** The next text of choice `index`: one token's, or several tokens' concatenated. */
  | ({ type: "token"; index: number; text: string; logprobs?: TokenLogprob[] } & SoFar)
  /** Choice `index` begins its tool call number `call` (from 0): the call's ID and function name. */
  | ({ type: "tool_call"; index: number; call: number; callId: string; name: string } & SoFar)
  /** The next characters of the arguments (JSON text) of choice `index`'s call `call`. */
  | ({ type: "tool_arguments"; index: number; call: number; text: string } & SoFar)
  /** Embedding jobs: the vectors of inputs `start`, `start + 1`, … (a long answer takes several events). */
  | { type: "embeddings"; start: number; vectors: number[][] }
  /** Image jobs: `step` of `steps` done (over all samples). */
  | { type: "progress"; step: number; steps: number }
  | {
      type: "done";
      choices: { index: number; finishReason: FinishReason }[];
      usage: Usage;
      /** Image requests only: each image's Redis key (jobs/image-job.ts) and seed, in sample order. */
      images?: { blob: string; seed: number; finishReason: "SUCCESS" }[];
    }
  | { type: "error"; error: { code: ErrorCode; message: string; param: string | null } };

/** A `done` of work that was stopped: some choice did not finish. */
export function isCutShort(event: StreamEvent): boolean {
  return event.type === "done" && event.choices.some((c) => c.finishReason === "cancelled");
}

/** A generated event's usage so far (SoFar); undefined for other events, and from older workers. */
export function usageSoFar(event: StreamEvent): Usage | undefined {
  return event.type === "token" || event.type === "tool_call" || event.type === "tool_arguments"
    ? event.usage
    : undefined;
}

/** An event as it leaves the worker: with its request's ID and its place in the request's events. */
export type WireMessage = StreamEvent & { id: string; seq: number };

/** An event with its place in its request's events (1, 2, …); the API's own errors have none. */
export type SequencedEvent = StreamEvent & { seq?: number };

/**
 * A running job's lease: the worker that runs a streamed job keeps `lease(prefix, requestId)`
 * alive (refreshed every LEASE_REFRESH_MS, expiring after LEASE_TTL_MS) from before its
 * first event to its last. The API that waits watches it: a lease it saw that is gone means
 * the worker died, and the request ends at once with an error instead of waiting for
 * BullMQ's stalled-job check (which, for inference, must never re-run it: the text would be
 * sent twice).
 */
export const LEASE_TTL_MS = 1_200;
export const LEASE_REFRESH_MS = 200;
export const LEASE_CHECK_MS = 250;
/** A request's keys share its ID as their hash tag (one slot on a Redis Cluster: the scripts below use two at once). */
export const leaseKey = (prefix: string, requestId: string) => `${prefix}:lease:{${requestId}}`;

/**
 * Orphaned work stops: each time it renews a lease, the worker counts who listens on the
 * request's route. Nobody, for ORPHAN_GRACE_MS on end (the API process died, and no client
 * resumed elsewhere), and the worker cancels the job. An API whose client left a resumable
 * stream waits as long for a resume before it cancels the job itself.
 */
export { ORPHAN_GRACE_MS } from "../domain/streams.js";

/** A request's event log (a Redis Stream): its meta at ID `0-1`, then event `seq` at `1-<seq>`. */
export const eventLogKey = (prefix: string, requestId: string) => `${prefix}:events:{${requestId}}`;
/** The channel a request's events go to when it is not the job's `replyTo` (it was resumed elsewhere). */
export const routeKey = (prefix: string, requestId: string) => `${prefix}:route:{${requestId}}`;
export const LOG_META_ID = "0-1";
export const logEntryId = (seq: number) => `1-${seq}`;

/**
 * A largest event, in JSON characters: bigger answers (embeddings) go out in several events,
 * so no one message can overflow the API's pub/sub output buffer in Redis and cut off every
 * other request on that API.
 */
export const MAX_EVENT_CHARS = 256 * 1024;

/**
 * Most tokens with logprobs in one event: with 20 alternatives a token takes up to a few
 * kilobytes of JSON, so merging stops there to keep events well under MAX_EVENT_CHARS.
 */
export const MAX_LOGPROB_TOKENS_PER_EVENT = 32;

/** Embedding vectors as events of at most about MAX_EVENT_CHARS each (a float takes at most 24 characters of JSON). */
export function embeddingEvents(vectors: number[][]): StreamEvent[] {
  const dimensions = Math.max(1, vectors[0]?.length ?? 1);
  const perEvent = Math.max(1, Math.floor(MAX_EVENT_CHARS / (dimensions * 24)));
  const events: StreamEvent[] = [];
  for (let start = 0; start < vectors.length; start += perEvent) {
    events.push({ type: "embeddings", start, vectors: vectors.slice(start, start + perEvent) });
  }
  return events;
}

export const channels = {
  reply: (prefix: string, instanceId: string) => `${prefix}:reply:${instanceId}`,
  cancel: (prefix: string) => `${prefix}:cancel`,
};

export function encodeEvent(requestId: string, seq: number, event: StreamEvent): string {
  return JSON.stringify({ id: requestId, seq, ...event });
}

export function decodeMessage(message: string): WireMessage | undefined {
  try {
    return asWireMessage(JSON.parse(message));
  } catch {
    return undefined;
  }
}

/** The events of a published message: one event, or an array of them (event-batcher.ts), in order. */
export function decodeMessages(message: string): WireMessage[] {
  try {
    const parsed: unknown = JSON.parse(message);
    const items = Array.isArray(parsed) ? parsed : [parsed];
    return items.map(asWireMessage).filter((m) => m !== undefined);
  } catch {
    return [];
  }
}

function asWireMessage(parsed: unknown): WireMessage | undefined {
  const m = parsed as WireMessage | null;
  return typeof m?.id === "string" && typeof m.type === "string" && typeof m.seq === "number" ? m : undefined;
}

/** Where a request's events go: its log (kept `logTtlMs` after the last event; 0 keeps none) and its route. */
export interface ReplyAddress {
  prefix: string;
  requestId: string;
  replyTo: string;
  logTtlMs: number;
}

// KEYS: log, route. ARGV: the job's replyTo, seq, message, log TTL in ms (0: no log).
const SEND_EVENT = `
if tonumber(ARGV[4]) > 0 then
  redis.call('XADD', KEYS[1], '1-' .. ARGV[2], 'e', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local channel = redis.call('GET', KEYS[2]) or ARGV[1]
return redis.call('PUBLISH', channel, ARGV[3])`;

/**
 * Logs event `seq` and publishes it on the request's route, in one step; resolves to the
 * number of API processes that received it. Plain EVAL, not EVALSHA: a script that must be
 * loaded first could put a later event in the log before an earlier one. A request with no
 * log cannot be resumed, so its route is its `replyTo`: a plain PUBLISH, which costs Redis less
 * (the script costs short requests a measurable share of their throughput);
 * on a cluster, one sent to the node of the request's keys, so that its events stay in order.
 */
export async function sendEvent(
  redis: RedisClient,
  to: ReplyAddress,
  seq: number,
  event: StreamEvent,
): Promise<number> {
  return sendMessage(redis, to, seq, encodeEvent(to.requestId, seq, event));
}

/** sendEvent of an event already encoded (encodeEvent) as `message`. */
export async function sendMessage(redis: RedisClient, to: ReplyAddress, seq: number, message: string): Promise<number> {
  const { prefix, requestId } = to;
  const keys = [eventLogKey(prefix, requestId), routeKey(prefix, requestId)];
  if (to.logTtlMs === 0) return publishInOrder(redis, keys[1]!, to.replyTo, message);
  return (await redis.eval(SEND_EVENT, 2, ...keys, to.replyTo, seq, message, to.logTtlMs)) as number;
}

// KEYS: lease, route. ARGV: the worker's ID, the lease's TTL, the job's replyTo. Returns the route.
const RENEW_LEASE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('GET', KEYS[2]) or ARGV[3]`;

/** Takes a job's lease, before its first event. */
export async function takeLease(redis: RedisClient, to: ReplyAddress, workerId: string): Promise<void> {
  await redis.set(leaseKey(to.prefix, to.requestId), workerId, "PX", LEASE_TTL_MS);
}

/**
 * Renews a job's lease; resolves to the number of API processes listening on its route (counted
 * apart from the script: on a cluster, the route's subscribers may be on any node).
 */
export async function renewLease(redis: RedisClient, to: ReplyAddress, workerId: string): Promise<number> {
  const keys = [leaseKey(to.prefix, to.requestId), routeKey(to.prefix, to.requestId)];
  const channel = (await redis.eval(RENEW_LEASE, 2, ...keys, workerId, LEASE_TTL_MS, to.replyTo)) as string;
  return subscribersOf(redis, channel);
}

export async function publishCancel(redis: RedisClient, prefix: string, requestId: string) {
  await redis.publish(channels.cancel(prefix), requestId);
}

/** Calls `onCancel(requestId)` for every cancel published; resolves once subscribed. */
export async function subscribeCancels(subscriber: RedisClient, prefix: string, onCancel: (requestId: string) => void) {
  const channel = channels.cancel(prefix);
  subscriber.on("message", (ch: string, message: string) => {
    if (ch === channel) onCancel(message);
  });
  await waitForRedis(subscriber, 10_000);
  await subscriber.subscribe(channel);
}
