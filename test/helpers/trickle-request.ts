import net from "node:net";

/** What the server answered before it closed the connection (status 0: closed with no answer). */
export interface TrickledAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte sent to the connection's close. */
  ms: number;
}

export interface TrickleRequest {
  /** Resolves once the connection is closed, by the server or by `stop`. */
  answer: Promise<TrickledAnswer>;
  /** Resolves once `sent` bytes (head and body together) are written. */
  sent(bytes: number): Promise<void>;
  stop(): void;
}

/**
 * A raw HTTP/1.1 client as slow as an attacker likes: it writes `fast` at once, then `slow`
 * one byte every `everyMs`, and reads whatever comes back until the connection closes.
 */
export function trickleRequest(url: string, fast: string, slow: string, everyMs = 1_000): TrickleRequest {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const started = performance.now();
  const received: Buffer[] = [];
  let written = 0;
  const waiters: { bytes: number; resolve: () => void }[] = [];
  const wrote = (n: number) => {
    written += n;
    for (const w of waiters.filter((w) => written >= w.bytes)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let next = 0;
  const drip = () => {
    if (next >= slow.length || socket.destroyed) return;
    socket.write(slow[next++]!, () => wrote(1));
    timer = setTimeout(drip, everyMs);
  };
  socket.once("connect", () => {
    socket.write(fast, () => wrote(Buffer.byteLength(fast)));
    drip();
  });
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  // A write after the server closed its side is refused with a reset: the answer is what came before.
  socket.on("error", () => {});
  const answer = new Promise<TrickledAnswer>((resolve) => {
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(received).toString("utf8"), performance.now() - started));
    });
  });
  return {
    answer,
    sent: (bytes) =>
      written >= bytes ? Promise.resolve() : new Promise((resolve) => waiters.push({ bytes, resolve })),
    stop: () => {
      clearTimeout(timer);
      socket.destroy();
    },
  };
}

function parseAnswer(text: string, ms: number): TrickledAnswer {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return { status: 0, headers: {}, body: text, ms };
  const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body: text.slice(split + 4), ms };
}
