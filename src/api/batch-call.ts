import type { Context } from "hono";
import type { LineAnswer } from "../control/batch-run.js";
import type { BatchRow } from "../db/schema/batches.js";
import type { NumberedLine } from "../domain/batch.js";
import { REQUEST_ID_HEADER } from "./request-id.js";

/**
 * How a batch's line reaches the API: the batch runner (control/batch-runner.ts) calls the app in
 * this process, `app.fetch(request, { hearthBatch })`, so that each line goes through the same
 * route as a request from the network (its checks, limits, fairness and metering). Only code in
 * this process can pass such bindings: a request from the network never has them. The line runs
 * as the key that created the batch, while that key is valid.
 */
export interface BatchCall {
  batchId: string;
  keyId: string;
}

export function batchCallOf(c: Context): BatchCall | undefined {
  return (c.env as { hearthBatch?: BatchCall } | undefined)?.hearthBatch;
}

/** Runs a batch's line through `fetch` (the app's own), as a request to the batch's endpoint by its key. */
export function lineCaller(fetch: (request: Request, env: { hearthBatch: BatchCall }) => Response | Promise<Response>) {
  return async (batch: BatchRow, line: NumberedLine, signal: AbortSignal): Promise<LineAnswer> => {
    const request = new Request(`http://batch.hearth.internal${batch.endpoint}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(line.body),
      signal,
    });
    const response = await fetch(request, { hearthBatch: { batchId: batch.id, keyId: batch.keyId } });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const retryAfter = Number(response.headers.get("retry-after"));
    return {
      status: response.status,
      requestId: response.headers.get(REQUEST_ID_HEADER),
      body,
      ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  };
}
