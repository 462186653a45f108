import type { Context } from "hono";
import type { AppDeps, AppEnv } from "./app-env.js";
import { noteEvents } from "./request-log.js";
import type { RouteTicket } from "./services/admission.js";
import { BATCH_PRIORITY_OFFSET } from "../requests/queue-lanes.js";

/**
 * A generation's admission (services/admission.ts) from a route: its tokens and in-flight slot
 * counted for the caller's account, the x-ratelimit-* headers set on the answer. The route
 * passes its events through `ticket.track` and queues with `ticket.queueing`: its priority, and
 * the intake gate (middleware/intake.ts) left once the job is queued, and the caller its usage is
 * metered to (docs/usage.md; none with HEARTH_USAGE_METERING off). Its model, and the tokens
 * its events report, go on the request's log line (request-log.ts).
 */
export async function admitGeneration(
  c: Context<AppEnv>,
  deps: AppDeps,
  request: { requestId: string; model: string; estimatedTokens: number },
): Promise<RouteTicket> {
  const caller = c.get("caller");
  const batchId = c.get("batchId");
  const ticket = await deps.admission.generation(caller, request.requestId, request.estimatedTokens);
  Object.assign(c.get("answerHeaders"), ticket.headers);
  const note = c.get("requestNote");
  note.model = request.model;
  return {
    ...ticket,
    track: (events) => noteEvents(ticket.track(events), note),
    queueing: {
      // A batch's line waits behind every interactive request (requests/queue-lanes.ts).
      priority: ticket.priority + (batchId ? BATCH_PRIORITY_OFFSET : 0),
      onQueued: c.get("leaveIntake"),
      // With metering off, a tagged job's record would wait in the log for a meter that never runs.
      ...(deps.config.usageMetering
        ? { meter: { accountId: caller.accountId, keyId: caller.keyId, ...(batchId ? { batchId } : {}) } }
        : {}),
    },
  };
}
