import { UnrecoverableError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "../../config.js";
import type { Logger } from "../../logger.js";
import { withTimeout } from "../../process/with-timeout.js";
import { createRedis } from "../../queues/connection.js";
import { jobs, type JobsOf } from "../../queues/jobs.js";
import { checkHandlers, type JobHandler, type JobHandlers } from "../handlers.js";
import { deployModel, failDeployment } from "./deploy-model.js";
import type { LifecycleDeps } from "./lifecycle-deps.js";
import { undeployModel } from "./undeploy-model.js";

type ControlJob = JobsOf<"control">;

/**
 * Consumes the control jobs (deploy, undeploy) in a process that owns the database:
 * every API process runs one. Handlers are idempotent, so several API replicas, retries
 * and duplicates are all safe.
 */
export class ControlWorker {
  private constructor(
    private readonly consumer: Worker,
    private readonly connection: Redis,
  ) {}

  static async start(config: Config, deps: LifecycleDeps): Promise<ControlWorker> {
    const handlers: JobHandlers<"control"> = {
      deploy: (payload) => deployModel(deps, payload),
      undeploy: (payload) => undeployModel(deps, payload),
    };
    checkHandlers("control", handlers);
    const connection = createRedis(config, "worker");
    const queueName = jobs.deploy.queueName();
    const consumer = new Worker(queueName, (job) => dispatch(job, handlers, deps.log), {
      connection,
      prefix: config.redisPrefix,
      concurrency: 2,
    });
    consumer.on("error", (err) => deps.log.warn("control queue error", { error: err.message }));
    consumer.on("failed", (job, err) => {
      if (!job) return;
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
      deps.log.warn("control job failed", { kind: job.name, attempt: job.attemptsMade, final, error: err.message });
      if (final && job.name === "deploy") {
        const parsed = jobs.deploy.payload.safeParse(job.data);
        if (parsed.success) {
          void failDeployment(
            deps,
            parsed.data,
            `Deploying failed after ${job.attemptsMade} attempts: ${err.message}`,
          ).catch(() => {});
        }
      }
    });
    // Connected before the API answers: a Redis lost while BullMQ is still connecting would
    // otherwise reject inside BullMQ, where nothing awaits it.
    await consumer.waitUntilReady();
    return new ControlWorker(consumer, connection);
  }

  /** Stops taking jobs; a running one may finish within `graceMs` (it is idempotent if cut off and retried). */
  async close(graceMs = 2_000): Promise<void> {
    // With Redis gone, BullMQ's close would wait for it forever.
    await withTimeout(this.consumer.close(), graceMs).catch(() => {});
    this.connection.disconnect();
    void this.consumer.disconnect().catch(() => {});
  }
}

async function dispatch(job: Job, handlers: JobHandlers<"control">, log: Logger): Promise<unknown> {
  const name = job.name as ControlJob;
  if (!Object.hasOwn(handlers, name)) throw new UnrecoverableError(`unknown control job kind ${job.name}`);
  const parsed = jobs[name].payload.safeParse(job.data);
  if (!parsed.success) {
    log.error("malformed control job", { kind: name, jobId: job.id, issues: parsed.error.message });
    throw new UnrecoverableError(`malformed ${name} job: ${parsed.error.message}`);
  }
  return (handlers[name] as JobHandler<typeof name>)(parsed.data);
}
