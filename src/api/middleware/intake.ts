import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env.js";
import type { IntakeGate } from "../services/intake-gate.js";

/**
 * A generation request takes one of its account's places in the intake gate
 * (services/intake-gate.ts) once authenticated; it leaves the gate when its job is queued
 * (`leaveIntake`, through the admission ticket's `queueing`) or, at the latest, when its
 * route has answered.
 */
export function intake(gate: IntakeGate) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const leave = await gate.enter(c.get("caller").accountId);
    c.set("leaveIntake", leave);
    try {
      await next();
    } finally {
      leave();
    }
  });
}
