import { createMiddleware } from "hono/factory";
import type { ApiKeyRole } from "../../domain/vocabulary.js";
import { AppError } from "../../errors.js";
import type { AppEnv } from "../app-env.js";

/**
 * Lets through only callers whose key has `role` (after requireApiKey, which sets the
 * caller). The one place roles are checked: app.ts puts it in front of every path that
 * needs one.
 */
export function requireRole(role: ApiKeyRole) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const caller = c.get("caller");
    if (caller.role !== role) {
      throw new AppError("forbidden", `This needs an ${role} key; this key's role is ${caller.role}.`);
    }
    await next();
  });
}
