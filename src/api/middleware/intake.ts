import type { Context, MiddlewareHandler, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import type { AppEnv } from "../app-env.js";
import type { IntakeGate } from "../../limits/intake-gate.js";
import { bearerToken } from "./auth.js";

/**
 * A generation request takes one of its account's places in the intake gate
 * (limits/intake-gate.ts); it leaves the gate when its job is queued (`leaveIntake`, through
 * the admission ticket's `queueing`) or, at the latest, when its route has answered.
 *
 * `intakeBeforeAuth` goes before authentication: a request whose key's check is reused (its
 * account known without a round trip, ApiKeyAuthenticator.known) takes its place there, so that
 * the rest of one account's burst waits at the gate before authentication's round trip to Redis
 * (its address's failures and its rate windows), not after it: another account's request that
 * arrives among them then waits for their HTTP intake only, not for 500 round trips and their
 * callbacks. `intake` goes after authentication and places the others (a key checked against
 * the database, a web session). Both run once the body is in (middleware/read-body.ts): a place
 * is held for the request's checks and queueing, never while its client sends slowly.
 */
export function intakeBeforeAuth(
  gate: IntakeGate,
  apiKeys: Pick<ApiKeyAuthenticator, "known">,
  /** Reads the body first (middleware/read-body.ts): a slow body never holds a place. */
  readBody: MiddlewareHandler,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const presented = bearerToken(c.req.header("authorization"));
    const known = presented === undefined ? undefined : apiKeys.known(presented);
    if (!known) return next();
    return readBody(c, () => inGate(c, next, gate, known.accountId));
  });
}

export function intake(gate: IntakeGate) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.get("leaveIntake")) return next();
    return inGate(c, next, gate, c.get("caller").accountId);
  });
}

async function inGate(c: Context<AppEnv>, next: Next, gate: IntakeGate, accountId: string) {
  const leave = await gate.enter(accountId);
  c.set("leaveIntake", leave);
  try {
    await next();
  } finally {
    leave();
  }
}
