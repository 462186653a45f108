import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { integrityOf, sha512Hash } from "../packaging/integrity.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";

/**
 * How `hearth upgrade` downloads a tarball (update-source.ts has the chain of trust): https
 * only (http only on this machine's loopback), no redirect to another scheme, host or port,
 * streamed to a temporary file with a size cap, and its sha512 checked before anyone uses it.
 */

/** Larger than any CLI tarball Hearth makes (about 1 MB), far smaller than trouble. */
export const MAX_TARBALL_BYTES = 64 * 1024 * 1024;
const MAX_REDIRECTS = 3;

/** https, or http to this machine only: a tarball fetched in the clear from elsewhere could be anyone's. */
export function checkTransport(url: string, what: string): void {
  const parsed = new URL(url);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(parsed.hostname) || /^127\./.test(parsed.hostname);
  if (parsed.protocol === "https:" || (parsed.protocol === "http:" && loopback)) return;
  throw usageError(
    `${what} ${url}: hearth upgrade fetches over https only (http only from this machine).`,
    "Use an https URL, or download the tarball yourself and pass its path.",
  );
}

/**
 * Streams `url` to a temporary file: at most MAX_TARBALL_BYTES, redirects only within the
 * first URL's origin (or `origin`), the sha512 computed on the way and checked at the end.
 */
export async function download(
  url: string,
  expect: { integrity?: string; origin?: string },
): Promise<{ file: string; cleanup(): Promise<void> }> {
  const response = await fetchFollowingSameOrigin(url, expect.origin);
  if (!response.ok || !response.body) {
    throw new CliError(
      EXIT.failure,
      `Downloading ${url} answered HTTP ${response.status}.`,
      "Check the address of the tarball.",
    );
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > MAX_TARBALL_BYTES) throw tooLarge(url);
  const dir = await mkdtemp(path.join(os.tmpdir(), "hearth-upgrade-"));
  const file = path.join(dir, "hearth.tgz");
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const hash = sha512Hash();
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > MAX_TARBALL_BYTES) return done(tooLarge(url));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream),
      counted,
      createWriteStream(file),
    );
  } catch (error) {
    await cleanup();
    if (error instanceof CliError) throw error;
    throw new CliError(EXIT.failure, `Downloading ${url} failed: ${(error as Error).message}.`);
  }
  const integrity = integrityOf(hash);
  if (expect.integrity !== undefined && integrity !== expect.integrity) {
    await cleanup();
    throw integrityMismatch(url, expect.integrity, integrity);
  }
  return { file, cleanup };
}

/** fetch, following redirects by hand: only to the same scheme, host and port as `origin` (default: the URL's). */
export async function fetchFollowingSameOrigin(url: string, origin = new URL(url).origin): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetch(current, { redirect: "manual" });
    } catch (e) {
      throw new CliError(
        EXIT.failure,
        `Cannot reach ${current} (${String((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message)}).`,
        "Check the address, or pass --source with a local tarball.",
      );
    }
    if (response.status < 300 || response.status >= 400) return response;
    const location = response.headers.get("location");
    await response.body?.cancel();
    const next = location ? new URL(location, current) : undefined;
    if (!next || next.origin !== origin) {
      throw new CliError(
        EXIT.failure,
        `${current} redirects to ${next?.href ?? "nowhere"}, another scheme, host or port; hearth upgrade does not follow it. Nothing was installed.`,
      );
    }
    if (hop >= MAX_REDIRECTS) throw new CliError(EXIT.failure, `${url} redirects more than ${MAX_REDIRECTS} times.`);
    current = next.href;
  }
}

function tooLarge(url: string): CliError {
  return new CliError(
    EXIT.failure,
    `${url} is larger than ${MAX_TARBALL_BYTES} bytes, more than any hearth CLI tarball; nothing was installed.`,
  );
}

export function integrityMismatch(where: string, expected: string, actual: string): CliError {
  return new CliError(
    EXIT.failure,
    `${where} does not have the expected sha512 (${expected}; it has ${actual}). Nothing was installed.`,
    "Download it again from the publisher, or check the integrity you were given.",
  );
}
