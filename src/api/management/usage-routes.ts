import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { exportUsageRoute, getUsageRoute, type UsageReport } from "../contract/management/usage-routes.js";
import { mountRoute } from "../mount-route.js";

/** An account's usage over a period, and its records as JSON lines (docs/usage.md). */
export function usageRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  mountRoute(app, getUsageRoute, async (c, { params, query }) => {
    const { group_by, ...period } = query;
    const usage = await management.usage.report(c.get("caller"), params.account_id, {
      ...period,
      groupBy: group_by ?? period.groupBy,
    });
    const { start, end, ...rest } = usage;
    return c.json({ ...rest, startTime: start.toISOString(), endTime: end.toISOString() } satisfies UsageReport, 200);
  });
  mountRoute(app, exportUsageRoute, async (c, { params, query }) => {
    const records = management.usage.records(c.get("caller"), params.account_id, query);
    // The first read checks who asks and the period, so that a refusal is still an error answer.
    const first = await records.next();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first.done) controller.close();
        else controller.enqueue(encoder.encode(`${JSON.stringify(first.value)}\n`));
      },
      async pull(controller) {
        const next = await records.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
      },
      async cancel() {
        await records.return(undefined);
      },
    });
    const answer = new Response(body, {
      headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" },
    });
    // zod-openapi types any content type naming json as a JSON body: JSON lines are a stream of them.
    return answer as never;
  });
}
