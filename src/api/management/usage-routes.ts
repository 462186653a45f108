import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { getUsageRoute, type UsageReport } from "../contract/management/usage-routes.js";
import { mountRoute } from "../mount-route.js";

/** An account's usage over a period (docs/usage.md). */
export function usageRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  mountRoute(app, getUsageRoute, async (c, { params, query }) => {
    const usage = await management.usage.report(c.get("caller"), params.account_id, query);
    const { start, end, ...rest } = usage;
    return c.json({ ...rest, startTime: start.toISOString(), endTime: end.toISOString() } satisfies UsageReport, 200);
  });
}
