import { createReadStream } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { RawAnswer } from "./http-exchange.js";

/**
 * Streams one file as a request body with a known Content-Length (so the server can refuse
 * an oversized file up front), reporting the bytes sent. An answer that comes before the
 * body is finished (the server refusing the file) wins over the broken pipe that follows.
 */

export interface StreamUpload {
  url: URL;
  method: "PUT" | "POST";
  headers: Record<string, string>;
  file: string;
  size: number;
  onProgress?: (sentBytes: number) => void;
  signal?: AbortSignal;
}

export function streamFile(upload: StreamUpload): Promise<RawAnswer> {
  const { url, file, size, onProgress, signal } = upload;
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
      headers: { ...upload.headers, "content-type": "application/octet-stream", "content-length": String(size) },
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
    source.pipe(request);
  });
}
