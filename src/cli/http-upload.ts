import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { RawAnswer } from "./http-exchange.js";

/**
 * Streams one file as a request body with a known Content-Length (so the server can refuse
 * an oversized file up front), reporting the file's bytes sent; as it is, or inside an
 * envelope (a multipart form around it). An answer that comes before the body is finished
 * (the server refusing the file) wins over the broken pipe that follows.
 */

/** What goes before and after a file in a body, and the body's content type. */
export interface Envelope {
  head: Buffer;
  tail: Buffer;
  contentType: string;
}

export interface StreamUpload {
  url: URL;
  method: "PUT" | "POST";
  headers: Record<string, string>;
  file: string;
  size: number;
  envelope?: Envelope;
  onProgress?: (sentBytes: number) => void;
  signal?: AbortSignal;
}

export function streamFile(upload: StreamUpload): Promise<RawAnswer> {
  const { url, file, size, onProgress, signal } = upload;
  const { head, tail, contentType } = upload.envelope ?? {
    head: Buffer.alloc(0),
    tail: Buffer.alloc(0),
    contentType: "application/octet-stream",
  };
  return new Promise<RawAnswer>((resolve, reject) => {
    const transport = url.protocol === "https:" ? https : http;
    const source = createReadStream(file);
    let answered = false;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      source.destroy();
      request.destroy();
      reject(error);
    };
    const request = transport.request(url, {
      method: upload.method,
      headers: {
        ...upload.headers,
        "content-type": contentType,
        "content-length": String(head.length + size + tail.length),
      },
      signal,
    });
    request.on("response", (response) => {
      answered = true;
      source.unpipe(request);
      source.destroy();
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        if (settled) return;
        settled = true;
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
      });
      response.on("error", fail);
    });
    // After an early answer the rest of the body cannot be written: that error is expected.
    request.on("error", (error) => {
      if (!answered || signal?.aborted) fail(error);
    });
    let sent = 0;
    source.on("data", (chunk) => {
      sent += chunk.length;
      onProgress?.(sent);
    });
    source.on("error", fail);
    source.on("end", () => request.end(tail));
    request.write(head);
    source.pipe(request, { end: false });
  });
}

/** A multipart/form-data envelope: the text fields, then the file as the field `field`. */
export function formEnvelope(fields: Record<string, string>, field: string, filename: string): Envelope {
  const boundary = `hearth-${randomBytes(16).toString("hex")}`;
  const quoted = (text: string) => text.replace(/["\\\r\n]/g, "_");
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(field)}"; filename="${quoted(filename)}"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
  return {
    head: Buffer.from(parts.join(""), "utf8"),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`, "utf8"),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}
