import fs from "node:fs/promises";
import path from "node:path";
import { adminKeyFilePath } from "../auth/bootstrap.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";

/**
 * `npm start`'s last word: one line, once its own API listens (it says so over the IPC channel)
 * and a worker is ready (its /readyz says 200), naming the address to open and where the admin
 * key is. Printed on stdout, outside the logger: it is for the person who started Hearth, on
 * every start. Not before the API says it listens: until then, whatever answers on the port is
 * someone else's (another Hearth, started twice).
 */

/** What the API, started by `npm start`, sends it once it listens. */
interface ApiListening {
  hearth: "api-listening";
  port: number;
}

/** The API's word to the supervisor, if it has one, that it listens on `port`. */
export function tellSupervisorListening(port: number): void {
  const message: ApiListening = { hearth: "api-listening", port };
  process.send?.(message);
}

/** The port in an API's "listening" message; undefined for any other message. */
export function listeningPort(message: unknown): number | undefined {
  const m = message as Partial<ApiListening> | null;
  return m?.hearth === "api-listening" && typeof m.port === "number" ? m.port : undefined;
}

/** Where a person on this machine reaches the API: its address, or loopback when it listens on every interface. */
export function localUrl(config: Pick<Config, "host" | "port">): string {
  const host = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "::1" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}

export interface AdminKeySource {
  /** HEARTH_ADMIN_KEY is set: the operator has the key. */
  fromEnvironment: boolean;
  /** The key file, as a person would type it (relative to the working directory when inside it). */
  file: string;
  fileExists: boolean;
}

export function readyLine(url: string, key: AdminKeySource): string {
  const ready = `Hearth is ready: ${url}`;
  if (key.fromEnvironment) {
    return `${ready} — sign in with the key in HEARTH_ADMIN_KEY (npx hearth signin --server ${url})`;
  }
  if (!key.fileExists) {
    return `${ready} — the admin key file ${key.file} is gone; create a key with \`npm run admin -- create-key\``;
  }
  return `${ready} — sign in with the key in ${key.file} (npx hearth signin --server ${url} < ${key.file})`;
}

export async function adminKeySource(config: Pick<Config, "adminKey" | "dataDir">): Promise<AdminKeySource> {
  const file = adminKeyFilePath(config.dataDir);
  const relative = path.relative(process.cwd(), file);
  return {
    fromEnvironment: config.adminKey !== undefined,
    file: relative.startsWith("..") || path.isAbsolute(relative) ? file : relative,
    fileExists: await fs.access(file).then(
      () => true,
      () => false,
    ),
  };
}

export interface AnnounceOptions {
  /** Where the line goes (stdout by default). */
  print?: (line: string) => void;
  intervalMs?: number;
  /** After this long unready, one log line says what /readyz is still waiting for. */
  slowMs?: number;
  /** Stops the waiting (Hearth is stopping). */
  signal?: AbortSignal;
}

/**
 * Asks the API's /readyz (at `config.port`, where the API said it listens) until it says ready,
 * then prints the ready line once. Nothing when `signal` ends the wait first.
 */
export async function announceWhenReady(
  config: Pick<Config, "host" | "port" | "adminKey" | "dataDir">,
  log: Logger,
  options: AnnounceOptions = {},
): Promise<void> {
  const {
    print = (line) => void process.stdout.write(`${line}\n`),
    intervalMs = 250,
    slowMs = 30_000,
    signal,
  } = options;
  const url = localUrl(config);
  const started = Date.now();
  let saidSlow = false;
  while (!signal?.aborted) {
    const answer = await fetch(`${url}/readyz`, { signal }).then(
      async (r) => ({ ok: r.ok, body: await r.text() }),
      () => ({ ok: false, body: "no answer yet" }),
    );
    if (answer.ok) {
      if (!signal?.aborted) print(readyLine(url, await adminKeySource(config)));
      return;
    }
    if (!saidSlow && Date.now() - started > slowMs) {
      saidSlow = true;
      log.info(`still starting: ${url}/readyz says ${answer.body}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
