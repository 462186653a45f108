import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { renderError } from "../../../src/api/middleware/errors.js";
import { readBody } from "../../../src/api/middleware/read-body.js";
import { createLogger } from "../../../src/logger.js";

/**
 * The body read before the intake gate (middleware/read-body.ts): whole, within its size and
 * time, and read once: what comes after reads the copy. body-deadline.test.ts runs it in the API
 * against slow sockets.
 */
describe("reading a request's body", () => {
  function app(timeoutMs = 1_000) {
    const app = new Hono();
    app.onError(renderError(createLogger("error", "test")));
    app.use("*", readBody({ maxBytes: 512, timeoutMs, tooLarge: "Too large." }));
    // A reader between the body read and the route (authentication's place), then the route's own.
    app.use("/json", async (c, next) => {
      expect(await c.req.json()).toEqual({ a: 1 });
      await next();
    });
    app.post("/json", async (c) => c.json({ again: await c.req.json(), text: await c.req.text() }));
    app.post("/form", async (c) => c.json(await c.req.parseBody()));
    app.get("/empty", (c) => c.text("no body"));
    return app;
  }

  /** A body sent in pieces with no Content-Length; `pulls` counts what was asked of it. */
  function streamed(pieces: string[], end = true) {
    const counter = { pulls: 0, cancelled: false };
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        counter.pulls++;
        const next = pieces.shift();
        if (next !== undefined) controller.enqueue(new TextEncoder().encode(next));
        else if (end) controller.close();
        // else: the rest never comes
      },
      cancel() {
        counter.cancelled = true;
      },
    });
    return { body, counter, init: { method: "POST", body, duplex: "half" } as RequestInit };
  }

  it("reads the body once; every later reader gets the same bytes", async () => {
    const { init, counter } = streamed(['{"a"', ":1}"]);
    const res = await app().request("/json", init);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ again: { a: 1 }, text: '{"a":1}' });
    // Two pieces and their end: the stream was read through once, by the body read alone.
    expect(counter.pulls).toBe(3);
  });

  it("gives a multipart form to parseBody from the copy", async () => {
    const form = new FormData();
    form.set("prompt", "a cat");
    const res = await app().request("/form", { method: "POST", body: form });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ prompt: "a cat" });
  });

  it("refuses a body over the limit with 413: at once by its Content-Length, else once read past it", async () => {
    const declared = await app().request("/json", {
      method: "POST",
      headers: { "content-length": "513" },
      body: "x".repeat(513),
    });
    expect(declared.status).toBe(413);
    const { init } = streamed(["x".repeat(300), "x".repeat(300)]);
    const sent = await app().request("/json", init);
    expect(sent.status).toBe(413);
    expect(await sent.json()).toEqual({
      error: { message: "Too large.", type: "invalid_request_error", param: null, code: "payload_too_large" },
    });
  });

  it("ends a body not complete by the deadline with 408, closing the connection", async () => {
    const { init, counter } = streamed(['{"a"'], false);
    const started = performance.now();
    const res = await app(100).request("/json", init);
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(res.status).toBe(408);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({
      error: {
        message: "The request body did not arrive within 100 ms of its headers (HEARTH_BODY_TIMEOUT_MS).",
        type: "invalid_request_error",
        param: null,
        code: "request_timeout",
      },
    });
    expect(counter.cancelled).toBe(true);
  });

  it("lets a request with no body through", async () => {
    const res = await app().request("/empty");
    expect(await res.text()).toBe("no body");
  });
});
