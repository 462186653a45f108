import type { Hono } from "hono";
import { AppError } from "../../errors.js";
import { clientGone, type AppDeps, type AppEnv } from "../app-env.js";
import { resumeStreamRoute } from "../contract/openai/routes.js";
import { mountRoute } from "../mount-route.js";
import { sseResponse } from "./sse.js";
import { chunksOf, streamViewSchema } from "./stream-view.js";

const EVENT_ID = /^\d{1,15}$/;

/** `GET /v1/streams/{request_id}`: a streamed completion, resumed after its `Last-Event-ID`. */
export function streamsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, resumeStreamRoute, async (c, { params }) => {
    const lastEventId = c.req.header("last-event-id");
    if (lastEventId !== undefined && !EVENT_ID.test(lastEventId)) {
      throw new AppError("invalid_request", `Last-Event-ID is ${JSON.stringify(lastEventId)}, not an event ID.`, {
        param: "Last-Event-ID",
      });
    }
    const abort = clientGone(c.req.raw);
    const { view, events } = await deps.inference.resume(params.request_id, c.get("caller").accountId, abort.signal);
    return sseResponse(events, chunksOf(streamViewSchema.parse(view)), () => abort.abort(), {
      requestId: params.request_id,
      after: lastEventId === undefined ? 0 : Number(lastEventId),
    });
  });
}
