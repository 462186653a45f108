import http, { type IncomingMessage } from "node:http";
import https from "node:https";

/**
 * One GET whose answer is read as a stream (a file's content, of any size): resolves with the
 * response once its head has arrived, whatever the status; the caller reads or drains the body.
 */
export function openDownload(
  url: URL,
  options: { headers: Record<string, string>; signal?: AbortSignal },
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request(
      url,
      { method: "GET", headers: options.headers, signal: options.signal },
      resolve,
    );
    request.on("error", reject);
    request.end();
  });
}
