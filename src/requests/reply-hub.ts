import { randomUUID } from "node:crypto";
import type { RedisClient } from "../redis/connection.js";
import { waitForRedis } from "../redis/connection.js";
import { channels, decodeMessages, type SequencedEvent } from "./stream.js";

/**
 * The API side of the stream contract: one subscriber connection and one channel
 * per API instance, demultiplexed to the requests waiting on it. No per-request
 * SUBSCRIBE round trip: the channel is live before any job is enqueued.
 */
export class ReplyHub {
  readonly instanceId = randomUUID();
  readonly channel: string;
  private readonly open = new Map<string, EventInbox>();

  private constructor(
    readonly subscriber: RedisClient,
    prefix: string,
  ) {
    this.channel = channels.reply(prefix, this.instanceId);
    subscriber.on("message", (channel: string, message: string) => {
      if (channel !== this.channel) return;
      for (const { id, ...event } of decodeMessages(message)) this.open.get(id)?.push(event);
    });
    // Messages published while the connection is down are lost for good, so a request
    // waiting on it can no longer be answered whole: end it now rather than let it hang.
    subscriber.on("close", () => {
      for (const inbox of this.open.values()) inbox.close(CONNECTION_LOST);
    });
  }

  static async start(subscriber: RedisClient, prefix: string): Promise<ReplyHub> {
    const hub = new ReplyHub(subscriber, prefix);
    // Subscribing before the connection is ready races ioredis's ready check
    // (INFO is refused in subscriber mode) and loses the subscription.
    await waitForRedis(subscriber, 10_000);
    await subscriber.subscribe(hub.channel);
    return hub;
  }

  /**
   * Starts collecting the events of one request. Close the inbox when done. A request has
   * one inbox per process: a newer one (the client resumed here) closes the older.
   */
  inbox(requestId: string): EventInbox {
    this.open.get(requestId)?.close(SUPERSEDED);
    const inbox = new EventInbox(() => {
      if (this.open.get(requestId) === inbox) this.open.delete(requestId);
    });
    this.open.set(requestId, inbox);
    return inbox;
  }

  /** Whether someone here is reading the request's events. */
  isOpen(requestId: string): boolean {
    return this.open.has(requestId);
  }

  get pending(): number {
    return this.open.size;
  }

  /** Ends every open inbox; the caller then disconnects the subscriber. */
  close(): void {
    for (const inbox of this.open.values()) inbox.close();
  }
}

const SUPERSEDED = "The stream was resumed by a newer connection.";
const CONNECTION_LOST = "The connection to the queue (Redis) was lost while the request ran; please retry.";

/** The events of one request, in arrival order. */
export class EventInbox {
  private readonly buffered: SequencedEvent[] = [];
  private waiter: ((event: SequencedEvent | undefined) => void) | undefined;
  private closed = false;
  /** Why the inbox was closed other than by its owner, if it was. */
  closedBecause: string | undefined;

  constructor(private readonly onClose: () => void) {}

  push(event: SequencedEvent): void {
    if (this.closed) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(event);
    } else {
      this.buffered.push(event);
    }
  }

  /** Puts events read elsewhere (a resumed request's log) ahead of those that arrived. */
  prepend(events: SequencedEvent[]): void {
    this.buffered.unshift(...events);
  }

  /** The next event; undefined once closed. */
  next(): Promise<SequencedEvent | undefined> {
    const event = this.buffered.shift();
    if (event) return Promise.resolve(event);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  close(reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closedBecause = reason;
    this.onClose();
    const w = this.waiter;
    this.waiter = undefined;
    w?.(undefined);
  }
}
