import http from "node:http";
import https from "node:https";

/** An HTTP answer, read whole. */
export interface RawAnswer {
  status: number;
  text: string;
}

/**
 * One request with an optional JSON body, its answer read whole: the CLI's calls to the API.
 * node:http rather than fetch: fetch's first use loads and compiles undici's HTTP parser (a
 * WebAssembly module) in the background, and the process then waits for that compilation before
 * it can exit, about 200 ms of a 400 ms `hearth whoami` here.
 */
export function exchange(
  url: URL,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const transport = url.protocol === "https:" ? https : http;
    const headers = { ...options.headers };
    if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
    const request = transport.request(url, { method: options.method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(options.body);
  });
}
