import { Writable } from "node:stream";
import pino from "pino";
import pretty from "pino-pretty";

/**
 * Hearth's logger: pino, one JSON object a line (`level`, `time`, `scope`, `msg` and the
 * fields), or pino-pretty's readable lines when stderr is a terminal (one line each, the fields
 * after the message). Written to stderr so stdout stays free for what a command prints for
 * people. Secrets never reach a line: API keys and the password of any URL (a Redis or
 * PostgreSQL URL) are masked in the message and in every field, however deep (`scrub`).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

/**
 * A logger at `level` for `scope`. `write` takes each line instead of stderr (tests); lines
 * are JSON then, as they are whenever stderr is not a terminal.
 */
export function createLogger(level: LogLevel, scope = "hearth", write?: (line: string) => void): Logger {
  const destination = write
    ? new Writable({
        write(chunk, _encoding, done) {
          write(chunk.toString());
          done();
        },
      })
    : process.stderr.isTTY
      ? pretty({ destination: 2, colorize: true, sync: true, singleLine: true, ignore: "pid,hostname" })
      : pino.destination({ fd: 2, sync: true });
  const root = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return wrap(root.child({ scope }), scope);
}

function wrap(log: pino.Logger, scope: string): Logger {
  const at =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (!log.isLevelEnabled(level)) return;
      log[level]((fields ? scrub(fields) : {}) as object, scrub(message) as string);
    };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (child) => wrap(log.child({ scope: `${scope}:${child}` }), `${scope}:${child}`),
  };
}

/** An API key (auth/api-keys.ts: `hth_` and at least 8 more characters): only its prefix stays. */
const API_KEY = /\b(hth_[A-Za-z0-9_-]{8})[A-Za-z0-9_-]+/g;
/** A URL's password: scheme://user:password@host → scheme://user:***@host. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi;

/** The value with secrets masked: strings, and the strings inside arrays, objects and errors. */
export function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.replace(API_KEY, "$1…").replace(URL_PASSWORD, "$1***@");
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: scrub(value.message), stack: scrub(value.stack) };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, depth + 1)]));
}
