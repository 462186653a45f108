import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BenchHttp } from "./http-client.js";

/**
 * Account B of the fairness scenario (and the interactive client of the batch scenario), in a
 * process of its own: B is another client of Hearth, and timed from the load generator's own
 * process its requests would also wait behind that process's work for A's flood (sending 500
 * requests, reading their answers), which is no part of Hearth. The parent asks for requests one
 * after another (`sequential`), or one a period (a second) from `start` until `stop` (`steady`);
 * this process times each request's first token.
 */

type Command = { type: "sequential"; count: number } | { type: "start"; periodMs: number } | { type: "stop" };

type Reply = { type: "ready" } | { type: "ttfts"; ttfts: number[] } | { type: "error"; message: string };

interface Setup {
  url: string;
  apiKey: string;
  body: Record<string, unknown>;
}

/** The parent's handle on the client process. */
export class SteadyClient {
  private readonly replies: ((reply: Reply) => void)[] = [];

  private constructor(private readonly child: ChildProcess) {
    child.on("message", (reply: Reply) => this.replies.shift()?.(reply));
    child.on("exit", (code, signal) => {
      for (const waiting of this.replies.splice(0)) waiting({ type: "error", message: `exited (${code ?? signal})` });
    });
  }

  /** Starts the process; resolves once it listens for commands. */
  static async start(setup: Setup): Promise<SteadyClient> {
    const entry = fileURLToPath(import.meta.url);
    const child = fork(entry, [JSON.stringify(setup)], { execArgv: ["--import", "tsx"], stdio: "inherit" });
    const client = new SteadyClient(child);
    await new Promise<void>((resolve, reject) => {
      client.replies.push((reply) =>
        reply.type === "ready" ? resolve() : reject(new Error(`B's client did not start: ${JSON.stringify(reply)}`)),
      );
    });
    return client;
  }

  /** `count` streamed requests, one after another: their times to first token. */
  sequential(count: number): Promise<number[]> {
    return this.ask({ type: "sequential", count });
  }

  /**
   * Starts one streamed request every `periodMs` (one a second by default; the next waits for the
   * last's end); `stop` ends them and gives their times to first token.
   */
  steady(periodMs = 1000): { stop(): Promise<number[]> } {
    const ttfts = this.ask({ type: "start", periodMs });
    return {
      stop: () => {
        this.child.send({ type: "stop" } satisfies Command);
        return ttfts;
      },
    };
  }

  close(): void {
    this.child.kill();
  }

  private ask(command: Command): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.replies.push((reply) =>
        reply.type === "ttfts" ? resolve(reply.ttfts) : reject(new Error(`B's client: ${JSON.stringify(reply)}`)),
      );
      this.child.send(command);
    });
  }
}

/** The client process: runs what the parent asks, one command at a time. */
async function serve(setup: Setup): Promise<void> {
  const b = new BenchHttp(setup.url, setup.apiKey);
  const send = (reply: Reply) => process.send!(reply);
  let stopping: (() => void) | undefined;
  process.on("message", async (command: Command) => {
    try {
      if (command.type === "stop") return stopping?.();
      const ttfts: number[] = [];
      if (command.type === "sequential") {
        for (let i = 0; i < command.count; i++) ttfts.push((await b.stream(setup.body)).ttftMs);
      } else {
        let going = true;
        let wake = () => {};
        stopping = () => {
          going = false;
          wake();
        };
        while (going) {
          const next = performance.now() + command.periodMs;
          ttfts.push((await b.stream(setup.body)).ttftMs);
          if (!going) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, Math.max(0, next - performance.now()));
          });
        }
      }
      send({ type: "ttfts", ttfts });
    } catch (error) {
      send({ type: "error", message: error instanceof Error ? error.message : String(error) });
    }
  });
  process.on("disconnect", () => {
    b.close();
    process.exit(0);
  });
  send({ type: "ready" });
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url))
  void serve(JSON.parse(process.argv[2]!) as Setup);
