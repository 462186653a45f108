import type { MiddlewareHandler } from "hono";
import type { Logger } from "../logger.js";
import type { SequencedEvent, Usage } from "../requests/stream.js";
import type { AppEnv, RequestNote } from "./app-env.js";
import { REQUEST_ID_HEADER } from "./request-id.js";

/**
 * The request log: one line per answer at `info` (method, path, status, time; a generation's
 * model, tokens and request ID too). A streamed generation's line is written when its stream
 * ends, so its time and tokens are the whole request's. The health probes (/healthz, /readyz),
 * asked every few seconds by load balancers and by `npm start`, are logged at `debug`.
 */

const PROBES = new Set(["/healthz", "/readyz"]);

export function logRequests(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const note: RequestNote = {};
    c.set("requestNote", note);
    await next();
    const write = () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const fields = {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms,
        ...(note.model === undefined ? {} : { model: note.model }),
        ...(note.usage === undefined
          ? {}
          : {
              promptTokens: note.usage.promptTokens,
              cachedTokens: note.usage.cachedTokens ?? 0,
              completionTokens: note.usage.completionTokens,
            }),
        requestId: c.res.headers.get(REQUEST_ID_HEADER) ?? undefined,
      };
      const line = PROBES.has(c.req.path) ? log.debug : log.info;
      line(summary(fields), fields);
    };
    if (note.ended) void note.ended.then(write);
    else write();
  };
}

/** `POST /v1/completions 200 41.2 ms accounts/hearth/models/hearth-tiny 9+5 tokens`: the line for a person. */
function summary(f: { method: string; path: string; status: number; ms: number; model?: string } & Partial<Usage>) {
  const tokens = f.promptTokens === undefined ? "" : ` ${f.promptTokens}+${f.completionTokens} tokens`;
  return `${f.method} ${f.path} ${f.status} ${f.ms} ms${f.model ? ` ${f.model}` : ""}${tokens}`;
}

/**
 * The events, passed through, their usage noted. Once they are followed (the first event is
 * asked for), the line waits for their end: `note.ended` settles then.
 */
export async function* noteEvents(
  events: AsyncGenerator<SequencedEvent, void, undefined>,
  note: RequestNote,
): AsyncGenerator<SequencedEvent, void, undefined> {
  let end!: () => void;
  note.ended = new Promise((resolve) => (end = resolve));
  try {
    for await (const event of events) {
      // Image jobs count no tokens: their zeros say nothing.
      if (event.type === "done" && event.usage.promptTokens + event.usage.completionTokens > 0)
        note.usage = event.usage;
      yield event;
    }
  } finally {
    end();
  }
}
