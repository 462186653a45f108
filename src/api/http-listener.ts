import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import type { Config } from "../config.js";
import { answerClientErrors } from "./client-errors.js";

/** How long an idle kept-alive connection stays open (announced in its `Keep-Alive` header). */
const KEEP_ALIVE_MS = 65_000;

export interface Listening {
  server: ServerType;
  port: number;
  url: string;
}

/**
 * The API's HTTP server, listening on HOST and PORT (0: a free port, named in `port` and `url`).
 * Where it cannot listen (the port taken or not this user's, HOST not this machine's), it fails
 * with what to set instead.
 */
export async function listenHttp(
  fetch: (request: Request) => Response | Promise<Response>,
  config: Pick<Config, "host" | "port" | "bodyTimeoutMs">,
): Promise<Listening> {
  const server = await new Promise<ServerType>((resolve, reject) => {
    // A request's headers must be in within HEARTH_BODY_TIMEOUT_MS too (its body's deadline is
    // app.ts's), checked every second rather than Node's default 30 s; a late one gets a 408.
    // An idle kept-alive connection is the client's to close: a server that closes it first
    // races the client's next request on it, which then fails with ECONNRESET (Node's default
    // 5 s did, for a client whose event loop was busy 5 s). Clients close theirs sooner (undici
    // 2 s before the timeout the server announces), and so do proxies (commonly 60 s).
    const serverOptions = {
      headersTimeout: config.bodyTimeoutMs,
      connectionsCheckingInterval: 1_000,
      keepAliveTimeout: KEEP_ALIVE_MS,
    };
    const s = serve({ fetch, port: config.port, hostname: config.host, serverOptions }, () => {
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", reject);
    answerClientErrors(s);
  }).catch((error: NodeJS.ErrnoException) => {
    throw new Error(listenFailure(error, config));
  });
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://${hostAndPort(config.host, port)}` };
}

function hostAndPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Why the API cannot listen where it was told to, and what to set instead. */
function listenFailure(error: NodeJS.ErrnoException, config: Pick<Config, "host" | "port">): string {
  const at = hostAndPort(config.host, config.port);
  switch (error.code) {
    case "EADDRINUSE":
      return `Cannot listen on ${at}: another process already listens there. Stop it, or set PORT to a free port.`;
    case "EACCES":
      return `Cannot listen on ${at}: this user may not open port ${config.port}. Set PORT to one above 1023.`;
    case "EADDRNOTAVAIL":
      return `Cannot listen on ${at}: ${config.host} is not an address of this machine. Set HOST to one that is (0.0.0.0 for all).`;
    default:
      return `Cannot listen on ${at}: ${error.message}`;
  }
}
