import type { Queue } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import type { ReplyHub } from "./reply-hub.js";
import { ORPHAN_GRACE_MS, publishCancel, routeKey } from "./stream.js";

/** A request whose caller went away: its job's ID and queue, and whether a client may resume it. */
export interface Withdrawn {
  requestId: string;
  queue: Queue;
  resumable: boolean;
}

/**
 * Taking back the jobs of requests whose caller went away or whose stream failed: a job still
 * queued is removed, a running one is cancelled (docs/reliability.md, "Orphaned work stops").
 */
export class Withdrawals {
  constructor(
    private readonly redis: RedisClient,
    private readonly hub: ReplyHub,
    private readonly prefix: string,
  ) {}

  /**
   * The client left a resumable request: a client may resume it (here or on another API
   * process) within ORPHAN_GRACE_MS; after that, unless one did, it is withdrawn.
   */
  later(w: Withdrawn): void {
    setTimeout(() => void this.now(w), ORPHAN_GRACE_MS).unref();
  }

  /**
   * Takes the job back or cancels it. A resumable request that someone now reads (a newer
   * connection here, or another API process holds its route) is left alone.
   */
  async now({ requestId, queue, resumable }: Withdrawn): Promise<void> {
    if (resumable) {
      if (this.hub.isOpen(requestId)) return;
      const route = await this.redis.get(routeKey(this.prefix, requestId)).catch(() => null);
      if (route !== null && route !== this.hub.channel) return;
    }
    const removed = await queue.remove(requestId).then(
      (n) => n === 1,
      () => false,
    );
    // With Redis unreachable the cancel cannot go out either; the request has already ended
    // for its caller, and the worker stops the job once it finds nobody listening (stream.ts).
    if (!removed) await publishCancel(this.redis, this.prefix, requestId).catch(() => {});
  }
}
