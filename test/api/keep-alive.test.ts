import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

const HEADERS_TIMEOUT_MS = 1_000;

/**
 * An idle kept-alive connection is the client's to close. With Node's default of 5 s the server
 * closed it first, and a client that reused it just then (its event loop busy for 5 s, say) got
 * ECONNRESET on a request the server never read: the SDK's POSTs are not retried, so the call
 * failed. Seen in CI as `read ECONNRESET` after a test's slow synchronous check.
 */
describe("a kept-alive connection", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false, env: { HEARTH_BODY_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) } });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("stays open past Node's 5 s and past the headers deadline, and says for how long", async () => {
    const connection = await openConnection(hearth.api.port);
    try {
      const request = `GET /v1/models HTTP/1.1\r\nHost: hearth\r\nAuthorization: Bearer ${hearth.apiKey}\r\n\r\n`;
      const first = await connection.exchange(request);
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      expect(first).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);

      // Idle for longer than Node's default keep-alive and than the (here 1 s) headers deadline:
      // the headers deadline runs from a request's first byte, not from the connection's last one.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(connection.closed()).toBe(false);
      expect(await connection.exchange(request)).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      connection.destroy();
    }
  }, 30_000);
});

interface RawConnection {
  /** Sends `request` and resolves with the response once its body (Content-Length) is in. */
  exchange(request: string): Promise<string>;
  closed(): boolean;
  destroy(): void;
}

function openConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    let closed = false;
    let waiting: (() => void) | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      waiting?.();
    });
    socket.on("close", () => {
      closed = true;
      waiting?.();
    });
    socket.once("error", reject);
    socket.once("connect", () =>
      resolve({
        exchange: (request) =>
          new Promise((done, fail) => {
            received = "";
            waiting = () => {
              const end = received.indexOf("\r\n\r\n");
              const length = /\r\ncontent-length: (\d+)/i.exec(received.slice(0, end));
              if (end >= 0 && length && received.length >= end + 4 + Number(length[1])) done(received);
              else if (closed) fail(new Error(`the server closed the connection; it had sent: ${received}`));
            };
            socket.write(request);
          }),
        closed: () => closed,
        destroy: () => socket.destroy(),
      }),
    );
  });
}
