import { Queue } from "bullmq";
import { scanKeys, type RedisClient } from "../redis/connection.js";
import { ownPrefix, type PrefixOwner } from "../redis/prefix-owner.js";
import { liveWorkers } from "./worker-registry.js";

/**
 * Removes the own queues (placement, placement.ts) of workers that are gone: a worker's
 * queue of a model is `inference-<model>@<worker id>`, and its keys stay in Redis after the
 * worker stops. By then its jobs are settled: its API processes moved the waiting ones to the
 * shared queue within HEARTH_PLACEMENT_WAIT_MS of placing them (placement only picks live
 * workers, and a worker is gone here once its heartbeat is 10 s late), and the lease watch ended
 * the requests of the active ones. What is left (an API process that died too) is orphaned, so
 * the queue is obliterated whole. Only the prefix's owner sweeps (throws otherwise): another
 * Hearth on the prefix has workers this one knows nothing of. Resolves to the queues removed.
 * The reconciler runs it.
 */
export async function sweepWorkerQueues(redis: RedisClient, prefix: string, owner: PrefixOwner): Promise<string[]> {
  const live = new Set((await liveWorkers(redis, prefix)).map((w) => w.id));
  const names = new Set(
    (await scanKeys(redis, `${prefix}:inference-*@*:meta`)).map((key) => key.slice(prefix.length + 1, -":meta".length)),
  );
  const gone: string[] = [];
  for (const name of names) {
    if (live.has(name.slice(name.indexOf("@") + 1))) continue;
    // A consumer refreshes this key while it runs (BullMQ's stalled-job check, every 30 s): a
    // worker still loading its models, before its first heartbeat, has it already.
    if ((await redis.exists(`${prefix}:${name}:stalled-check`)) === 1) continue;
    gone.push(name);
  }
  if (gone.length > 0) await ownPrefix(redis, prefix, owner);
  for (const name of gone) {
    const queue = new Queue(name, { connection: redis, prefix });
    queue.on("error", () => {});
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }
  return gone;
}
