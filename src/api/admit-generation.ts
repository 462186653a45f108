import type { Context } from "hono";
import type { AppDeps, AppEnv } from "./app-env.js";
import type { RouteTicket } from "./services/admission.js";

/**
 * A generation's admission (services/admission.ts) from a route: its tokens and in-flight slot
 * counted for the caller's account, the x-ratelimit-* headers set on the answer. The route
 * passes its events through `ticket.track` and queues with `ticket.queueing`: its priority, and
 * the intake gate (middleware/intake.ts) left once the job is queued.
 */
export async function admitGeneration(
  c: Context<AppEnv>,
  deps: AppDeps,
  requestId: string,
  estimatedTokens: number,
): Promise<RouteTicket> {
  const ticket = await deps.admission.generation(c.get("caller"), requestId, estimatedTokens);
  Object.assign(c.get("answerHeaders"), ticket.headers);
  return { ...ticket, queueing: { priority: ticket.priority, onQueued: c.get("leaveIntake") } };
}
