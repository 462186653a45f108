import { isCluster, type RedisClient } from "../redis/connection.js";
import {
  encodeEvent,
  eventLogKey,
  MAX_EVENT_CHARS,
  routeKey,
  sendMessage,
  type ReplyAddress,
  type StreamEvent,
} from "./stream.js";

/** How long an event waits at most for the events of other requests to go with it. */
export const EVENT_BATCH_WINDOW_MS = 1;

interface Waiting extends OutgoingEvent {
  settle(result: number | Error): void;
}

/**
 * A worker's events, sent together (the worker side of the stream contract, under each
 * request's ReplyPublisher). A decode step gives each generating request a token, one after
 * another (samplings run in turn), and each would be a Redis command and a message for the
 * API to read. Here an event waits until every request streaming from this worker has one
 * waiting too (the step is over), or EVENT_BATCH_WINDOW_MS at most, then they all go in one
 * command, and the events for each API process in one message (sendEvents, below). A
 * request streams from its first event until `finished`; alone, its events do not wait for
 * others. What waits stays within MAX_EVENT_CHARS, so that no message grows past what one
 * event may be (an event that would pass it sends what waits first).
 *
 * A complete step's events go on the event loop's next turn (setImmediate), not at once: by then
 * the engine has queued the step's next decode, which node-llama-cpp dispatches on setImmediate
 * too, so the script's encoding and write overlap the decode rather than delay it. Measured on 2
 * cores, 16 streams of hearth-tiny through the API, three alternating pairs: tokens/s +3, +10 and
 * +7 %, the worker's CPU per token 3–12 % lower.
 *
 * Order is kept: events leave in the order they came, in one command or in commands sent one
 * after another on one connection.
 */
export class EventBatcher {
  private waiting: Waiting[] = [];
  /** The characters of the waiting events' messages. */
  private waitingChars = 0;
  /** Requests with an event waiting. */
  private readonly ready = new Set<string>();
  /** Requests that have sent an event and not finished. */
  private readonly streaming = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly windowMs = EVENT_BATCH_WINDOW_MS,
  ) {}

  /** Resolves to the API processes the event reached, as sendEvent does; rejects where it failed. */
  send(to: ReplyAddress, seq: number, event: StreamEvent): Promise<number> {
    const message = encodeEvent(to.requestId, seq, event);
    if (this.waitingChars + message.length > MAX_EVENT_CHARS) this.flush();
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({ to, seq, message, settle: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
      this.waitingChars += message.length;
      this.streaming.add(to.requestId);
      this.ready.add(to.requestId);
      if (this.ready.size >= this.streaming.size) this.flushSoon();
      else this.timer ??= setTimeout(this.flush, this.windowMs);
    });
  }

  /** The request sends no more events: the others no longer wait for its next one. */
  finished(requestId: string): void {
    this.streaming.delete(requestId);
    if (this.waiting.length > 0 && this.ready.size >= this.streaming.size) this.flushSoon();
  }

  private flushSoon(): void {
    this.immediate ??= setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const batch = this.waiting;
    this.waiting = [];
    this.waitingChars = 0;
    this.ready.clear();
    if (batch.length === 0) return;
    sendEvents(this.redis, batch).then(
      (results) => {
        for (const [i, result] of results.entries()) batch[i]!.settle(result);
      },
      (error: Error) => {
        for (const waiting of batch) waiting.settle(error);
      },
    );
  };
}

// KEYS: log, route of each event in turn. ARGV: per event, its job's replyTo, seq, message, log TTL
// in ms (0: no log). Each event is logged as stream.ts's SEND_EVENT does; the events for one channel then go
// in one message, a JSON array of them in order (one alone goes as it is). Returns, per event,
// the API processes its channel reached, or -1 where its log refused it (nothing published).
const SEND_EVENTS = `
local channels, messages, order, reached = {}, {}, {}, {}
for i = 1, #KEYS / 2 do
  local base = (i - 1) * 4
  local ttl = tonumber(ARGV[base + 4])
  local logged = true
  if ttl > 0 then
    logged = redis.pcall('XADD', KEYS[2 * i - 1], '1-' .. ARGV[base + 2], 'e', ARGV[base + 3])
    if type(logged) == 'table' and logged.err then logged = false else redis.call('PEXPIRE', KEYS[2 * i - 1], ttl) end
  end
  if logged then
    local channel = redis.call('GET', KEYS[2 * i]) or ARGV[base + 1]
    channels[i] = channel
    if not messages[channel] then messages[channel] = {}; order[#order + 1] = channel end
    table.insert(messages[channel], ARGV[base + 3])
  end
end
for _, channel in ipairs(order) do
  local list = messages[channel]
  reached[channel] = redis.call('PUBLISH', channel, #list == 1 and list[1] or ('[' .. table.concat(list, ',') .. ']'))
end
local out = {}
for i = 1, #KEYS / 2 do out[i] = channels[i] and reached[channels[i]] or -1 end
return out`;

/** An event on its way: where it goes, its place in its request's events, and its message (encodeEvent). */
interface OutgoingEvent {
  to: ReplyAddress;
  seq: number;
  message: string;
}

/**
 * Sends events of several requests at once; resolves to each one's receivers (as sendEvent's),
 * or to an Error for one whose log refused it. On one server, in one script: each event logged
 * and routed, and the events for each API process in one message, an array (decodeMessages reads
 * both forms), as large as their messages together (the caller keeps that within
 * MAX_EVENT_CHARS). On a cluster a request's keys live on a node of their own, so each event
 * goes in a script of its own (stream.ts's SEND_EVENT), all in the same write.
 */
async function sendEvents(redis: RedisClient, events: readonly OutgoingEvent[]): Promise<(number | Error)[]> {
  if (isCluster(redis) || events.length === 1) {
    return Promise.all(events.map((e) => sendMessage(redis, e.to, e.seq, e.message).catch((error: Error) => error)));
  }
  const keys: string[] = [];
  const args: (string | number)[] = [];
  for (const { to, seq, message } of events) {
    keys.push(eventLogKey(to.prefix, to.requestId), routeKey(to.prefix, to.requestId));
    args.push(to.replyTo, seq, message, to.logTtlMs);
  }
  const reached = (await redis.eval(SEND_EVENTS, keys.length, ...keys, ...args)) as number[];
  return reached.map((n, i) =>
    n >= 0 ? n : new Error(`the log of request ${events[i]!.to.requestId} refused event ${events[i]!.seq}`),
  );
}
