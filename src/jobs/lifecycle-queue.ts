import { AppError } from "../errors.js";
import { jobs, type LifecyclePayload } from "./jobs.js";
import type { ProducerQueues } from "./producer-queues.js";

/** The producer side of deploy and undeploy jobs. */
export class LifecycleQueue {
  constructor(private readonly queues: ProducerQueues) {}

  /** The queue itself, for looking at its jobs (the reconciler). */
  queue() {
    return this.queues.get(jobs.deploy.queueName());
  }

  async enqueue(kind: "deploy" | "undeploy", payload: LifecyclePayload): Promise<void> {
    const data = jobs[kind].payload.parse(payload);
    try {
      await this.queue().add(kind, data, jobs[kind].options);
    } catch (cause) {
      throw new AppError(
        "unavailable",
        `Could not queue the ${kind}: the queue (Redis) is unavailable; please retry.`,
        {
          cause,
        },
      );
    }
  }
}
