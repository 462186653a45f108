import { usageError } from "./exit-codes.js";

const UNIT_MS = { h: 3_600_000, d: 86_400_000 } as const;

/**
 * An option's time, as the CLI takes times: a span (`30d`, `12h`) counted from `now` in
 * `direction`, or an RFC 3339 time. Epoch milliseconds; a usage error naming the option for
 * anything else.
 */
export function timeOption(option: string, text: string, direction: "ahead" | "ago", now = Date.now()): number {
  const span = /^(\d{1,5})([hd])$/.exec(text.trim());
  const sign = direction === "ahead" ? 1 : -1;
  const at = span ? now + sign * Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS] : Date.parse(text);
  if (!Number.isFinite(at) || (!span && !/\d{4}-\d{2}-\d{2}T/.test(text))) {
    throw usageError(`Invalid ${option} "${text}": give a span (30d, 12h) or a time (2027-01-31T00:00:00Z).`);
  }
  return at;
}
