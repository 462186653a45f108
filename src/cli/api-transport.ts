import { stat } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { exchange, type RawAnswer } from "./http-exchange.js";

/**
 * How the CLI's clients (api-client.ts, batch-client.ts) talk to a Hearth server: JSON calls,
 * file uploads and downloads, every failure one of two errors: HearthApiError (the server
 * answered with an error) or HearthConnectionError (no answer).
 */

/** The server's error answer: {"error": {message, type, param, code}} and its status. */
export class HearthApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "HearthApiError";
  }
}

export class HearthConnectionError extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot reach Hearth at ${server} (${reason})`, options);
    this.name = "HearthConnectionError";
  }
}

export interface UploadOptions {
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
}

/** A local file sent as a request body: as it is, or as the file field of a multipart form. */
export interface FileBody {
  method: "PUT" | "POST";
  file: string;
  headers?: Record<string, string>;
  form?: { fields: Record<string, string>; field: string; filename: string };
}

export class ApiTransport {
  readonly server: string;

  constructor(
    server: string,
    private readonly apiKey?: string,
  ) {
    this.server = normalizeServer(server);
  }

  /** One request with an optional JSON body; its JSON answer. */
  async call<T>(method: string, route: string, body?: unknown): Promise<T> {
    let answer: RawAnswer;
    try {
      answer = await exchange(this.url(route), {
        method,
        headers: { ...this.headers(), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (cause) {
      throw new HearthConnectionError(this.server, errorReason(cause), { cause });
    }
    return this.parse<T>(answer);
  }

  /** Streams a local file to `route` with its progress; the JSON answer. Aborting rejects with the abort. */
  async sendFile<T>(route: string, body: FileBody, options: UploadOptions = {}): Promise<T> {
    // Loaded here, not at start: node:http and node:https are for uploads and downloads only.
    const { formEnvelope, streamFile } = await import("./http-upload.js");
    const { size } = await stat(body.file);
    let answer: RawAnswer;
    try {
      answer = await streamFile({
        url: this.url(route),
        method: body.method,
        headers: { ...this.headers(), ...body.headers },
        file: body.file,
        size,
        envelope: body.form && formEnvelope(body.form.fields, body.form.field, body.form.filename),
        signal: options.signal,
        onProgress: (sent) => options.onProgress?.(sent, size),
      });
    } catch (cause) {
      if (options.signal?.aborted) throw cause;
      throw new HearthConnectionError(this.server, errorReason(cause), { cause });
    }
    return this.parse<T>(answer);
  }

  /** A GET whose answer is not JSON: its body as a stream, once the server has answered 2xx. */
  async download(route: string, signal?: AbortSignal): Promise<IncomingMessage> {
    const { openDownload } = await import("./http-download.js");
    let response: IncomingMessage;
    try {
      response = await openDownload(this.url(route), { headers: this.headers(), signal });
    } catch (cause) {
      if (signal?.aborted) throw cause;
      throw new HearthConnectionError(this.server, errorReason(cause), { cause });
    }
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return response;
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    throw this.refusal({ status, text: Buffer.concat(chunks).toString("utf8") });
  }

  private url(route: string): URL {
    return new URL(`${this.server}${route}`);
  }

  private headers(): Record<string, string> {
    return { accept: "application/json", ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) };
  }

  private parse<T>(answer: RawAnswer): T {
    const json = jsonOf(answer.text);
    if (answer.status >= 200 && answer.status < 300 && json !== undefined) return json as T;
    throw this.refusal(answer, json);
  }

  /** The error an answer that is not a 2xx with JSON stands for. */
  private refusal({ status, text }: RawAnswer, json = jsonOf(text)): HearthApiError {
    const error = (json as { error?: { message?: unknown; code?: unknown; param?: unknown } } | undefined)?.error;
    if (error && typeof error.message === "string") {
      return new HearthApiError(
        status,
        String(error.code ?? status),
        error.message,
        typeof error.param === "string" ? error.param : null,
      );
    }
    const excerpt = text.trim().slice(0, 200) || "empty body";
    return new HearthApiError(
      status,
      `http_${status}`,
      `HTTP ${status} from ${this.server}, which does not look like Hearth: ${excerpt}`,
    );
  }
}

/** http://host:8080, http://host:8080/ and http://host:8080/v1 all mean the server at http://host:8080. */
export function normalizeServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new TypeError(`${JSON.stringify(server)} is not a URL (expected e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TypeError(`${server}: only http:// and https:// servers`);
  return `${url.origin}${url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "")}`;
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorReason(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause ?? error;
  const code = (cause as NodeJS.ErrnoException).code;
  return code ?? (cause as Error).message ?? String(cause);
}
