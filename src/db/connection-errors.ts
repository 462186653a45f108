/**
 * Whether an error means the database cannot be reached right now (as opposed to a query
 * that is wrong): the API answers those with 503, once, in its error renderer. Looks
 * through the `cause` chain, since drizzle wraps the driver's errors.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && unavailableCode(code, e.message)) return true;
    if (PGLITE_CLOSED.test(e.message)) return true;
  }
  return false;
}

/**
 * Whether the database refused a statement for the data it was given (SQLSTATE class 22, a
 * value out of range or malformed, or 23, a check, foreign key, null or unique key broken):
 * the same statement would be refused again.
 */
export function isRefusedData(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

/** Node's socket errors and postgres-js's own connection errors. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // db/query-timeout.ts: the server did not answer in time.
  "QUERY_TIMEOUT",
]);

/** An embedded PGlite that was closed (the process is shutting down). */
const PGLITE_CLOSED = /^PGlite is closed/;

function unavailableCode(code: string, message: string): boolean {
  if (CONNECTION_CODES.has(code)) return true;
  // SQLSTATE: class 08 connection exception, class 53 insufficient resources (too many
  // connections, out of memory or disk), 57014 a statement cancelled (statement_timeout, or
  // Hearth's own cancel of one with no answer), 57P01–57P03 the server shutting down or starting,
  // 55000 "database … is not currently accepting connections", 3D000 the database is gone.
  return (
    /^(08|53)[0-9A-Z]{3}$/.test(code) ||
    /^57P0[1-3]$/.test(code) ||
    code === "57014" ||
    code === "3D000" ||
    (code === "55000" && message.includes("not currently accepting connections"))
  );
}
