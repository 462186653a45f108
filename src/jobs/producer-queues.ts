import { Queue } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import { queueUnavailable } from "../redis/redis-call.js";
import { withTimeout } from "../process/with-timeout.js";

/**
 * The BullMQ queues an API process adds jobs to, all on its one shared producer
 * connection, each opened on first use.
 *
 * BullMQ sets a queue up asynchronously (it waits for the connection, then asks Redis
 * for its version). Two things about that set-up shape this class:
 * - A set-up that fails leaves the queue failing every call for good, so such a queue
 *   is dropped and the next request opens a fresh one. A queue is only opened on a
 *   ready connection, so that a request while Redis is down gets a 503 at once.
 * - Closing a queue on a shared connection removes the listener its set-up reports
 *   failure to; a set-up that fails after that (when the connection ends) would be an
 *   unhandled rejection. So close waits for each set-up to settle, and leaves unclosed
 *   the queues whose set-up has not: closing those frees nothing of theirs.
 */
export class ProducerQueues {
  private readonly queues = new Map<string, { queue: Queue; settled: Promise<boolean> }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  get(name: string): Queue {
    const open = this.queues.get(name);
    if (open) return open.queue;
    if (this.redis.status !== "ready") throw queueUnavailable();
    const queue = new Queue(name, { connection: this.redis, prefix: this.prefix });
    queue.on("error", () => {});
    const settled = queue.waitUntilReady().then(
      () => true,
      () => {
        if (this.queues.get(name)?.queue === queue) this.queues.delete(name);
        return false;
      },
    );
    this.queues.set(name, { queue, settled });
    return queue;
  }

  async close(timeoutMs = 2_000): Promise<void> {
    const open = [...this.queues.values()];
    this.queues.clear();
    const closing = open.map(async ({ queue, settled }) => {
      // Shutting down: a queue whose set-up never finished is left unclosed (see above), and
      // one whose close fails has a connection that is already gone; nothing is left to undo.
      if (await withTimeout(settled, timeoutMs).catch(() => false)) await queue.close().catch(() => {});
    });
    await Promise.all(closing);
  }
}
