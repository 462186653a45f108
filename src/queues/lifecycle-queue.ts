import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { AppError } from "../errors.js";
import { jobs, type LifecyclePayload } from "./jobs.js";

/** The producer side of deploy and undeploy jobs. */
export class LifecycleQueue {
  private readonly queue: Queue;

  constructor(redis: Redis, prefix: string) {
    this.queue = new Queue(jobs.deploy.queueName(), { connection: redis, prefix });
    this.queue.on("error", () => {});
  }

  async enqueue(kind: "deploy" | "undeploy", payload: LifecyclePayload): Promise<void> {
    const data = jobs[kind].payload.parse(payload);
    try {
      await this.queue.add(kind, data, jobs[kind].options);
    } catch (cause) {
      throw new AppError("unavailable", `Could not queue the ${kind}: the queue (Redis) is unavailable; please retry.`, {
        cause,
      });
    }
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => {});
  }
}
