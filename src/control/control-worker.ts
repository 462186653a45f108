import { UnrecoverableError, type Worker } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import type { Config } from "../config.js";
import { withTimeout } from "../process/with-timeout.js";
import type { Logger } from "../logger.js";
import { modelName } from "../domain/model-name.js";
import { createRedis } from "../redis/connection.js";
import { consumeJobs } from "../jobs/job-consumer.js";
import type { JobHandlers } from "../jobs/job-handlers.js";
import { jobs } from "../jobs/jobs.js";
import { deployModel, failDeployment } from "./deploy-model.js";
import type { ControlDeps } from "./control-deps.js";
import { undeployModel } from "./undeploy-model.js";

/**
 * Consumes the control jobs (deploy, undeploy) in a process that owns the database:
 * every API process runs one. Handlers are idempotent, so several API replicas, retries
 * and duplicates are all safe.
 */
export class ControlWorker {
  private constructor(
    private readonly consumer: Worker,
    private readonly connection: RedisClient,
    private readonly log: Logger,
  ) {}

  static async start(config: Config, deps: ControlDeps): Promise<ControlWorker> {
    const handlers: JobHandlers<"control"> = {
      deploy: (payload) => deployModel(deps, payload),
      undeploy: (payload) => undeployModel(deps, payload),
    };
    const connection = createRedis(config, "worker");
    const consumer = consumeJobs("control", jobs.deploy.queueName(), handlers, {
      connection,
      prefix: config.redisPrefix,
      concurrency: 2,
      log: deps.log,
    });
    consumer.on("failed", (job, err) => {
      if (!job) return;
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
      const jobId = job.id;
      deps.log.warn("control job failed", {
        kind: job.name,
        jobId,
        attempt: job.attemptsMade,
        final,
        error: err.message,
      });
      if (final && job.name === "deploy") {
        const parsed = jobs.deploy.payload.safeParse(job.data);
        if (parsed.success) {
          const reason = `Deploying failed after ${job.attemptsMade} attempts: ${err.message}`;
          failDeployment(deps, parsed.data, reason).catch((failure: unknown) =>
            // The deployment stays DEPLOYING: this line is how an operator learns of it.
            deps.log.error("could not mark a failed deploy FAILED", {
              model: modelName(parsed.data.accountId, parsed.data.modelId),
              jobId,
              error: String(failure),
            }),
          );
        }
      }
    });
    // Connected before the API answers: a Redis lost while BullMQ is still connecting would
    // otherwise reject inside BullMQ, where nothing awaits it.
    await consumer.waitUntilReady();
    return new ControlWorker(consumer, connection, deps.log);
  }

  /** Stops taking jobs; a running one may finish within `graceMs` (it is idempotent if cut off and retried). */
  async close(graceMs = 2_000): Promise<void> {
    // With Redis gone, BullMQ's close would wait for it forever.
    await withTimeout(this.consumer.close(), graceMs).catch((err: unknown) =>
      this.log.warn("control worker closed before its jobs ended", { error: String(err) }),
    );
    this.connection.disconnect();
    // Ends a close that timed out; a connection already gone has nothing left to end.
    void this.consumer.disconnect().catch(() => {});
  }
}
