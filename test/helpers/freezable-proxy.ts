import net from "node:net";
import { freePort } from "./net.js";

/**
 * A TCP proxy that can stop forwarding while it keeps every connection open: the server
 * behind it looks alive (connections are accepted) but answers nothing, as a frozen host or a
 * network partition does, the case no server-side timeout covers.
 */
export interface FreezableProxy {
  /** `target`'s URL with the proxy's host and port. */
  url: string;
  freeze(): void;
  /**
   * Freezes once a client has sent `text` (case-sensitive; it may span chunks): the chunk that
   * holds it goes through, nothing after it does, in either direction.
   */
  freezeAfter(text: string): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  let trigger: string | undefined;
  const held: (() => void)[] = [];
  const forward = (from: net.Socket, to: net.Socket, fromClient: boolean) => {
    // The end of the client's last chunk, for a trigger that spans two chunks.
    let tail = "";
    from.on("data", (chunk: Buffer) => {
      if (frozen) return held.push(() => to.write(chunk));
      to.write(chunk);
      if (!fromClient || trigger === undefined) return;
      const text = tail + chunk.toString("latin1");
      if (text.includes(trigger)) frozen = true;
      tail = trigger.length > 1 ? text.slice(-(trigger.length - 1)) : "";
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    forward(client, upstream, true);
    forward(upstream, client, false);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  const listenPort = await freePort();
  await new Promise<void>((resolve) => server.listen(listenPort, "127.0.0.1", resolve));
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(listenPort);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    freezeAfter: (text: string) => {
      trigger = text;
    },
    thaw: () => {
      frozen = false;
      trigger = undefined;
      for (const write of held.splice(0)) write();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
