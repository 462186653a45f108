import { createMiddleware } from "hono/factory";
import { AppError } from "../../errors.js";

export interface ReadBodyOptions {
  /** Larger is a 413: at once when Content-Length says so, else once that many bytes have come. */
  maxBytes: number;
  /** The whole body must be in within this of the request's headers, else a 408 that closes the connection. */
  timeoutMs: number;
  /** The 413's message. */
  tooLarge: string;
}

/** Requests whose body this read already (it runs at most once a request, wherever it is mounted). */
const buffered = new WeakSet<Request>();

/**
 * Reads a request's whole body into memory, bounded in size and in time, before anything after
 * it runs; later readers (`c.req.json()`, `c.req.parseBody()`) read that copy, not the socket.
 *
 * Why before: a generation request takes one of its account's few intake places
 * (middleware/intake.ts) and then reads its body; a client that sends the body a byte a second
 * would hold that place until Node's request timeout, and a handful of such sockets would stall
 * every other request of the account. Read first, a slow body holds only its own socket, and
 * only until the deadline: then a 408 that closes the connection.
 */
export function readBody(options: ReadBodyOptions) {
  return createMiddleware(async (c, next) => {
    const body = c.req.raw.body;
    if (!body || buffered.has(c.req.raw)) return next();
    const declared = Number(c.req.header("content-length"));
    if (!c.req.header("transfer-encoding") && declared > options.maxBytes) {
      throw new AppError("payload_too_large", options.tooLarge);
    }
    // This runs as soon as the headers are in: the deadline starts now.
    const bytes = await readWithin(body, options, () => c.header("connection", "close"));
    c.req.raw = new Request(c.req.raw, { body: bytes });
    buffered.add(c.req.raw);
    return next();
  });
}

async function readWithin(
  body: ReadableStream<Uint8Array>,
  options: ReadBodyOptions,
  closeConnection: () => void,
): Promise<Uint8Array> {
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), options.timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const step = await Promise.race([reader.read(), expired]);
      if (step === "expired") {
        // The rest of the body is never read: the connection cannot carry another request.
        closeConnection();
        throw new AppError(
          "request_timeout",
          `The request body did not arrive within ${options.timeoutMs} ms of its headers (HEARTH_BODY_TIMEOUT_MS).`,
        );
      }
      if (step.done) break;
      size += step.value.byteLength;
      if (size > options.maxBytes) throw new AppError("payload_too_large", options.tooLarge);
      chunks.push(step.value);
    }
  } catch (cause) {
    // Cancelling settles a read still pending; the socket itself is left to the server to close.
    reader.cancel().catch(() => {});
    if (cause instanceof AppError) throw cause;
    // The client went away mid-body (or sent a broken chunked encoding): nobody reads the answer.
    throw new AppError("invalid_request", "The request body could not be read.", { cause });
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks, size);
}
