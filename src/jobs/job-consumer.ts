import { UnrecoverableError, Worker, type Job } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import type { Logger } from "../logger.js";
import { checkHandlers, type JobHandler, type JobHandlers } from "./job-handlers.js";
import { jobs, type JobConsumer, type JobsOf } from "./jobs.js";

export interface ConsumeOptions {
  connection: RedisClient;
  prefix: string;
  concurrency: number;
  log: Logger;
  /** Told of a job whose payload the registry refuses, before it fails for good (to end its request, say). */
  onMalformed?: (job: Job, issues: string) => Promise<void>;
}

/**
 * Consumes one queue with the handlers of a consumer (the job registry's `consumer`): each
 * job's kind is looked up, its payload validated against the registry, and the handler
 * given the parsed payload. A kind without a handler, or a payload that does not parse,
 * fails the job without retries (retrying cannot mend it).
 */
export function consumeJobs<C extends JobConsumer>(
  consumer: C,
  queueName: string,
  handlers: JobHandlers<C>,
  options: ConsumeOptions,
): Worker {
  checkHandlers(consumer, handlers);
  const { log } = options;
  const runsOnce = (Object.values(jobs) as { consumer: JobConsumer; runsOnce?: boolean }[]).some(
    (job) => job.consumer === consumer && job.runsOnce,
  );
  const worker = new Worker(queueName, (job) => dispatch(consumer, handlers, job, options), {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    ...(runsOnce ? { maxStalledCount: 0 } : {}),
  });
  worker.on("error", (err) => log.warn("queue consumer error", { queue: queueName, error: err.message }));
  return worker;
}

async function dispatch<C extends JobConsumer>(
  consumer: C,
  handlers: JobHandlers<C>,
  job: Job,
  { log, onMalformed }: ConsumeOptions,
): Promise<unknown> {
  const name = job.name as JobsOf<C>;
  if (!Object.hasOwn(handlers, name)) throw new UnrecoverableError(`unknown ${consumer} job kind ${job.name}`);
  const parsed = jobs[name].payload.safeParse(job.data);
  if (!parsed.success) {
    log.error("malformed job", { kind: name, jobId: job.id, issues: parsed.error.message });
    await onMalformed?.(job, parsed.error.message);
    throw new UnrecoverableError(`malformed ${name} job: ${parsed.error.message}`);
  }
  return (handlers[name] as JobHandler<typeof name>)(parsed.data as never);
}
