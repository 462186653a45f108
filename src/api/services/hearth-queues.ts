import type { Queue } from "bullmq";
import type { Db } from "../../db/client.js";
import { listModels } from "../../db/queries/models.js";
import { BUILTIN_ACCOUNT_ID } from "../../domain/model-name.js";
import { jobs } from "../../jobs/jobs.js";
import type { ProducerQueues } from "../../jobs/producer-queues.js";
import type { WorkerInfo } from "../../jobs/worker-registry.js";

/**
 * Every queue of this Hearth, for the operators' console and the metrics: the inference queue
 * and the express lane of each base model, each live worker's own queue of each model it serves (placement), the
 * image queue of each image model, and the deploy/undeploy (control) queue.
 */
export async function hearthQueues(db: Db, queues: ProducerQueues, workers: WorkerInfo[]): Promise<Queue[]> {
  const models = await listModels(db, BUILTIN_ACCOUNT_ID);
  const names = [
    ...models
      .filter((m) => m.kind === "base")
      .flatMap((m) => [jobs.inference.queueName(m.modelId), jobs.inference.expressQueueName(m.modelId)]),
    ...workers.flatMap((w) => w.models.map((model) => jobs.inference.queueName(model, w.id))),
    ...models.filter((m) => m.kind === "image").map((m) => jobs.image.queueName(m.modelId)),
    jobs.deploy.queueName(),
  ];
  return [...new Set(names)].map((name) => queues.get(name));
}
