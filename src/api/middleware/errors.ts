import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDatabaseUnavailable } from "../../db/connection-errors.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";

/** The one place errors become responses: an OpenAI-shaped body with the right status. */
export function renderError(log: Logger) {
  return (err: Error, c: Context) => {
    const error = toAppError(err);
    if (error.status < 500 && error.detail !== undefined) {
      // The client's mistake (an unreadable image, say): what a library said of it, no stack; at
      // debug, since the request's own line (request-log.ts) already has its status.
      log.debug("request refused", { path: c.req.path, code: error.code, detail: error.detail });
    } else if (error.code === "internal" || error.detail !== undefined) {
      log.error("unhandled error", {
        path: c.req.path,
        error: err.stack ?? String(err),
        ...(error.detail !== undefined ? { detail: error.detail } : {}),
      });
    }
    // Everything that is a 503 passes (a worker, Redis, the database): a client may retry soon.
    if (error.status === 503) c.header("retry-after", "1");
    for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
    // An internal failure's own words (paths, keys, a library's text) are for the logs only.
    const shown = error.code === "internal" ? INTERNAL : error;
    return c.json(shown.toBody(), error.status as ContentfulStatusCode);
  };
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    const code =
      err.status === 413
        ? "payload_too_large"
        : err.status === 401
          ? "unauthorized"
          : err.status === 403
            ? "forbidden"
            : "invalid_request";
    return new AppError(code, err.message || "Bad request.", { cause: err });
  }
  if (isDatabaseUnavailable(err)) {
    return new AppError("unavailable", "The database is unavailable; please retry shortly.", { cause: err });
  }
  return new AppError("internal", INTERNAL.message, { cause: err });
}

const INTERNAL = new AppError("internal", "Something went wrong on our side; please retry.");

export function renderNotFound(c: Context) {
  const error = new AppError("not_found", `No route for ${c.req.method} ${c.req.path}.`);
  return c.json(error.toBody(), 404);
}
