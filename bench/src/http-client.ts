import http from "node:http";

/**
 * The load generator's HTTP client: node:http with keep-alive connections, bodies read
 * as they arrive and server-sent events split incrementally, so that the client costs
 * little CPU on a small machine and times the first token when its bytes arrive.
 */

export interface StreamTiming {
  /** Request start to the first `data:` event that carries text (the first token's chunk). */
  ttftMs: number;
  /** Request start to `data: [DONE]`. */
  totalMs: number;
  /**
   * Generated tokens, as the server's usage counts them: a chunk may carry several tokens
   * (the worker coalesces them under back-pressure), so chunks are no count.
   */
  tokens: number;
  /** `data:` events that carried text. */
  textChunks: number;
  /** The prompt's tokens, and those of them the worker's prompt cache served, as the usage chunk counts them. */
  promptTokens: number;
  cachedTokens: number;
}

export interface JsonReply {
  status: number;
  body: unknown;
  ms: number;
}

export class BenchHttp {
  private readonly agent: http.Agent;
  private readonly base: URL;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    {
      idleMs = 4_000,
      keepAlive = true,
    }: {
      /**
       * Idle sockets are closed after this, before the server's keep-alive timeout (Node's 5 s)
       * closes them: a socket the server closes just as a request is sent on it fails that request
       * with ECONNRESET or "socket hang up" (a 500-request flood lasting over 5 s lost 30-200).
       */
      idleMs?: number;
      /** false: a connection per request, for a server that closes its connections unannounced. */
      keepAlive?: boolean;
    } = {},
  ) {
    this.agent = new http.Agent({ keepAlive, maxSockets: Infinity, timeout: idleMs });
    this.base = new URL(baseUrl);
  }

  /** POSTs a JSON body and reads the whole JSON answer. */
  async postJson(route: string, body: unknown): Promise<JsonReply> {
    const started = performance.now();
    const { status, text } = await this.request("POST", route, JSON.stringify(body));
    return { status, body: parseJson(text), ms: performance.now() - started };
  }

  /** PATCHes a JSON body and reads the whole JSON answer. */
  async patchJson(route: string, body: unknown): Promise<JsonReply> {
    const started = performance.now();
    const { status, text } = await this.request("PATCH", route, JSON.stringify(body));
    return { status, body: parseJson(text), ms: performance.now() - started };
  }

  async getJson(route: string, auth = true): Promise<JsonReply> {
    const started = performance.now();
    const { status, text } = await this.request("GET", route, undefined, auth);
    return { status, body: parseJson(text), ms: performance.now() - started };
  }

  /** GETs a text answer (e.g. /metrics) that must succeed. */
  async getText(route: string): Promise<string> {
    const { status, text } = await this.request("GET", route);
    if (status !== 200) throw new Error(`GET ${route}: HTTP ${status} ${text.slice(0, 200)}`);
    return text;
  }

  /** A completion that must succeed; returns its wall time. */
  async complete(body: Record<string, unknown>): Promise<number> {
    const reply = await this.postJson("/v1/completions", { ...body, stream: false });
    if (reply.status !== 200) throw new Error(`completion failed: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.ms;
  }

  /**
   * A streamed completion (or chat completion, by `route`), timed from the request's start; its
   * tokens counted by the usage chunk.
   */
  stream(body: Record<string, unknown>, route: StreamRoute = "/v1/completions"): Promise<StreamTiming> {
    const payload = JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } });
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const req = this.open("POST", route, payload, true, (res) => {
        if (res.statusCode !== 200) {
          collectText(res).then((text) => reject(new Error(`stream failed: HTTP ${res.statusCode} ${text}`)), reject);
          return;
        }
        res.setEncoding("utf8");
        let buffer = "";
        let ttftMs = Number.NaN;
        let firstEventMs = Number.NaN;
        let tokens = Number.NaN;
        let promptTokens = Number.NaN;
        let cachedTokens = Number.NaN;
        let textChunks = 0;
        let done = false;
        res.on("data", (piece: string) => {
          buffer += piece;
          for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            // An event may carry an `id:` line (Hearth numbers its token events) before its data.
            const dataLine = event.split("\n").find((line) => line.startsWith("data: "));
            if (dataLine === undefined) continue;
            const data = dataLine.slice(6);
            const at = performance.now() - started;
            if (Number.isNaN(firstEventMs)) firstEventMs = at;
            if (data === "[DONE]") {
              done = true;
              continue;
            }
            const chunk = JSON.parse(data) as StreamChunk;
            if (chunk.error) {
              reject(new Error(`stream error: ${chunk.error.message}`));
              res.destroy();
              return;
            }
            const choice = chunk.choices?.[0];
            if (choice?.text || choice?.delta?.content) {
              if (textChunks === 0) ttftMs = at;
              textChunks++;
            }
            if (chunk.usage) {
              tokens = chunk.usage.completion_tokens;
              promptTokens = chunk.usage.prompt_tokens ?? Number.NaN;
              cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? Number.NaN;
            }
          }
        });
        res.on("end", () => {
          if (!done || Number.isNaN(tokens)) reject(new Error("the stream ended without usage and [DONE]"));
          else {
            // A stream with no text at all (an empty first token) is timed by its first event.
            const firstMs = textChunks > 0 ? ttftMs : firstEventMs;
            const totalMs = performance.now() - started;
            resolve({ ttftMs: firstMs, totalMs, tokens, textChunks, promptTokens, cachedTokens });
          }
        });
        res.on("error", reject);
      });
      req.on("error", reject);
    });
  }

  close(): void {
    this.agent.destroy();
  }

  private request(
    method: string,
    route: string,
    body?: string,
    auth = true,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = this.open(method, route, body, auth, (res) => {
        collectText(res).then((text) => resolve({ status: res.statusCode ?? 0, text }), reject);
      });
      req.on("error", reject);
    });
  }

  private open(
    method: string,
    route: string,
    body: string | undefined,
    auth: boolean,
    onResponse: (res: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const headers: http.OutgoingHttpHeaders = {};
    if (auth) headers.authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(body);
    }
    const req = http.request(
      { host: this.base.hostname, port: this.base.port, path: route, method, headers, agent: this.agent },
      onResponse,
    );
    req.end(body);
    return req;
  }
}

export type StreamRoute = "/v1/completions" | "/v1/chat/completions";

/** A completion's chunk carries `text`, a chat completion's `delta.content`. */
interface StreamChunk {
  choices?: { text?: string; delta?: { content?: string | null } }[];
  usage?: { completion_tokens: number; prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  error?: { message: string };
}

function collectText(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (piece: string) => (text += piece));
    res.on("end", () => resolve(text));
    res.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
