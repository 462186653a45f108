import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { AppError } from "../errors.js";
import { jobs, type LifecyclePayload } from "./jobs.js";

/**
 * The producer side of deploy and undeploy jobs. The BullMQ queue is opened on first use,
 * not at start-up, so that a Redis that dies while the API starts fails a request (503)
 * instead of leaving queue set-up commands to fail where nobody awaits them.
 */
export class LifecycleQueue {
  private queue: Queue | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async enqueue(kind: "deploy" | "undeploy", payload: LifecyclePayload): Promise<void> {
    const data = jobs[kind].payload.parse(payload);
    try {
      await this.open().add(kind, data, jobs[kind].options);
    } catch (cause) {
      throw new AppError("unavailable", `Could not queue the ${kind}: the queue (Redis) is unavailable; please retry.`, {
        cause,
      });
    }
  }

  private open(): Queue {
    if (!this.queue) {
      this.queue = new Queue(jobs.deploy.queueName(), { connection: this.redis, prefix: this.prefix });
      this.queue.on("error", () => {});
    }
    return this.queue;
  }

  async close(): Promise<void> {
    await this.queue?.close().catch(() => {});
  }
}
