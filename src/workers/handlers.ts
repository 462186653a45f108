import { jobs, type JobName, type JobPayload } from "../queues/jobs.js";

/** What a worker does with one job of a kind, given its validated payload. */
export type JobHandler<N extends JobName> = (payload: JobPayload<N>) => Promise<unknown>;

/** One handler per job kind of the registry: a kind without one fails the type check... */
export type JobHandlers = { [N in JobName]: JobHandler<N> };

/** ...and the start-up check, for handlers assembled at run time. */
export function checkHandlers(handlers: Partial<Record<string, unknown>>): void {
  const missing = (Object.keys(jobs) as JobName[]).filter((name) => typeof handlers[name] !== "function");
  if (missing.length > 0) throw new Error(`No worker handler for job kind(s): ${missing.join(", ")}`);
}
