/**
 * A small structured logger: one line per event, JSON fields after the message.
 * Written to stderr so stdout stays free for what a command prints for people.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

export function createLogger(
  level: LogLevel,
  scope = "hearth",
  write: (line: string) => void = (line) => void process.stderr.write(line),
): Logger {
  const log = (at: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (rank[at] < rank[level]) return;
    const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : "";
    write(`${new Date().toISOString()} ${at.padEnd(5)} [${scope}] ${message}${extra}\n`);
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (child) => createLogger(level, `${scope}:${child}`, write),
  };
}
