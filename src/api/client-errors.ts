import type { EventEmitter } from "node:events";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { AppError } from "../errors.js";

/** How long a refused connection stays open for its client to read the answer and close it. */
const LINGER_MS = 2_000;

/**
 * Requests that Node's HTTP server refuses before Hono sees them (headers too large, not HTTP,
 * or late: its 'clientError'), answered in Hearth's error shape rather than a bare status line,
 * then the connection closed. What the client still sends meanwhile is read and dropped: closing
 * with it unread would reset the connection and could lose the answer.
 */
export function answerClientErrors(server: EventEmitter): void {
  const answered = new WeakSet<Duplex>();
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return; // the rest of a refused request
    // A connection reset, or one whose response is already under way: nothing can be said.
    const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const error = refusal(err);
    const body = JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}

function refusal(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return new AppError(
        "request_header_fields_too_large",
        `The request's headers are larger than ${maxHeaderSize} bytes in all.`,
      );
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new AppError("payload_too_large", "The request's chunk extensions are too large.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError("request_timeout", "The request's headers did not arrive in time.");
    default:
      return new AppError("invalid_request", "The request is not valid HTTP/1.1.");
  }
}
