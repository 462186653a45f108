import { z } from "zod";

/** The value kinds the variables share: an environment variable is text, these read it. */

export const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");

export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Empty or blank text reads as unset. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));

/** A whole number when set; unset (or blank), a value config.ts derives from other variables. */
export const optionalInt = (min: number, max: number) =>
  optionalString.pipe(z.coerce.number<string>().int().min(min).max(max).optional());

/** A schema from a parser that returns its value or `{ problem }`, the problem becoming the variable's error. */
export function parsedBy<T extends object>(parse: (text: string) => T | { problem: string }) {
  return z.string().transform((text, ctx) => {
    const parsed = parse(text);
    if ("problem" in parsed) {
      ctx.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    }
    return parsed as T;
  });
}
