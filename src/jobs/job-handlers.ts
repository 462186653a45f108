import { jobs, type JobConsumer, type JobName, type JobPayload, type JobsOf } from "./jobs.js";

/** What a process does with one job of a kind, given its validated payload. */
export type JobHandler<N extends JobName> = (payload: JobPayload<N>) => Promise<unknown>;

/** One handler per job kind a consumer takes: a kind without one fails the type check... */
export type JobHandlers<C extends JobConsumer> = { [N in JobsOf<C>]: JobHandler<N> };

/** ...and the start-up check, for handlers assembled at run time. */
export function checkHandlers(consumer: JobConsumer, handlers: Partial<Record<string, unknown>>): void {
  const missing = (Object.keys(jobs) as JobName[]).filter(
    (name) => jobs[name].consumer === consumer && typeof handlers[name] !== "function",
  );
  if (missing.length > 0) throw new Error(`No ${consumer} handler for job kind(s): ${missing.join(", ")}`);
}
