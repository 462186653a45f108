import net from "node:net";

/**
 * A TCP proxy in front of a server that forwards what clients send slowly (a few KiB a
 * second), so that a test can act in the middle of an upload. It reports how many bytes
 * of a request whose first line matches `watch` it has forwarded.
 */
export interface SlowProxy {
  url: string;
  /** Resolves once `bytes` of a watched request have been forwarded. */
  forwarded(bytes: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSlowProxy(
  target: string,
  watch: RegExp,
  chunkBytes = 1024,
  everyMs = 50,
): Promise<SlowProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let watched = 0;
  const waiters: { bytes: number; resolve: () => void }[] = [];
  const report = (n: number) => {
    watched += n;
    for (const w of waiters.filter((w) => watched >= w.bytes)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let isWatched = false;
    const queue: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const next = queue.shift();
      if (!next) return void client.resume();
      const piece = next.subarray(0, chunkBytes);
      if (next.length > chunkBytes) queue.unshift(next.subarray(chunkBytes));
      upstream.write(piece);
      if (isWatched) report(piece.length);
      timer = setTimeout(pump, everyMs);
    };
    client.on("data", (chunk: Buffer) => {
      // Connections are kept alive: each chunk that starts a request decides what is watched.
      const firstLine = chunk.subarray(0, 512).toString("latin1").split("\r\n")[0]!;
      if (/^[A-Z]+ \S+ HTTP\/1\.1$/.test(firstLine)) isWatched = watch.test(firstLine);
      queue.push(chunk);
      client.pause();
      timer ??= setTimeout(pump, 0);
    });
    upstream.pipe(client);
    const end = () => {
      if (timer) clearTimeout(timer);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: proxyPort } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${proxyPort}`,
    forwarded: (bytes) =>
      watched >= bytes ? Promise.resolve() : new Promise((resolve) => waiters.push({ bytes, resolve })),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
