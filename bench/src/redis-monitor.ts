import net from "node:net";
import tls from "node:tls";

/**
 * Redis MONITOR on a connection of its own, read line by line.
 *
 * Not ioredis's `monitor()`: ioredis enters its monitoring state one microtask after the
 * MONITOR's "+OK" is parsed, so on a busy server the first monitored command, arriving in the
 * same TCP read as that "+OK", is taken for the reply to a command never sent and thrown out
 * of the socket's data handler ("Command queue state error"); the same happens to lines still
 * in flight when it disconnects. Here every line after the "+OK" is a monitored command, for
 * as long as the socket is open.
 */

export interface MonitoredCommand {
  /** The server's clock when it ran the command, in milliseconds since the epoch. */
  at: number;
  /** Who ran it: "127.0.0.1:50312", "lua" (a script), "unix:/path"... */
  source: string;
  /** The command's name and arguments, unescaped. */
  args: string[];
}

export class RedisMonitor {
  private constructor(private readonly socket: net.Socket) {}

  /** Resolves once the server has answered MONITOR; `onCommand` then gets every command it runs. */
  static open(redisUrl: string, onCommand: (command: MonitoredCommand) => void): Promise<RedisMonitor> {
    const url = new URL(redisUrl);
    const port = Number(url.port || 6379);
    const host = url.hostname || "127.0.0.1";
    const socket =
      url.protocol === "rediss:" ? tls.connect({ port, host, servername: host }) : net.connect({ port, host });
    const handshake: string[] = [];
    if (url.password) {
      const user = decodeURIComponent(url.username);
      handshake.push(
        command(user ? ["AUTH", user, decodeURIComponent(url.password)] : ["AUTH", decodeURIComponent(url.password)]),
      );
    }
    handshake.push(command(["MONITOR"]));
    let pendingOks = handshake.length;
    socket.write(handshake.join(""));

    return new Promise((resolve, reject) => {
      const fail = (error: Error) => {
        socket.destroy();
        reject(error);
      };
      socket.once("error", fail);
      let buffered = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => {
        buffered += chunk;
        let end = buffered.indexOf("\r\n");
        while (end >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          end = buffered.indexOf("\r\n");
          if (pendingOks > 0) {
            if (line !== "+OK") return fail(new Error(`Redis refused MONITOR: ${line.replace(/^-/, "")}`));
            if (--pendingOks === 0) {
              socket.off("error", fail);
              socket.on("error", () => {});
              resolve(new RedisMonitor(socket));
            }
            continue;
          }
          const parsed = line.startsWith("+") ? parseMonitorLine(line.slice(1)) : undefined;
          if (parsed) onCommand(parsed);
        }
      });
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A command in RESP, as an array of bulk strings. */
function command(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`;
}

/**
 * One MONITOR line: `1795654372.520605 [0 127.0.0.1:42130] "eval" "..." "2"`. Redis quotes
 * each argument and escapes `\\ \" \n \r \t \a \b` and other bytes as `\xHH`; the line comes
 * in as latin1 (one char per byte), so the arguments' bytes are decoded as UTF-8 here.
 */
export function parseMonitorLine(line: string): MonitoredCommand | undefined {
  const head = /^(\d+\.\d+) \[\d+ ([^\]]*)\] /.exec(line);
  if (!head) return undefined;
  const args: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] !== '"') return undefined;
    const bytes: number[] = [];
    i++;
    for (; i < line.length && line[i] !== '"'; i++) {
      if (line[i] !== "\\") {
        bytes.push(line.charCodeAt(i));
        continue;
      }
      const escaped = line[++i];
      if (escaped === "x") {
        bytes.push(Number.parseInt(line.slice(i + 1, i + 3), 16));
        i += 2;
      } else {
        bytes.push((ESCAPES[escaped ?? ""] ?? escaped ?? "").charCodeAt(0));
      }
    }
    args.push(Buffer.from(bytes).toString("utf8"));
    i += 2; // the closing quote and the space before the next argument
  }
  return { at: Number(head[1]) * 1000, source: head[2]!, args };
}

const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b" };
