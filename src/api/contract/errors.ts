import { z } from "@hono/zod-openapi";
import { errorCodes, type ErrorCode } from "../../errors.js";

/** The error body and the error responses of every operation, from the codes in errors.ts. */

/** Why an operation fails, by error code; each becomes a response of the code's status. */
export type Reasons = Partial<Record<ErrorCode, string>>;

const codes = Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]];
const types = [...new Set(Object.values(errorCodes).map((e) => e.type))] as [string, ...string[]];

export const errorSchema = z
  .object({
    error: z.object({
      message: z.string().openapi({ description: "What went wrong, for a person." }),
      type: z.enum(types).openapi({ description: "The OpenAI error type." }),
      param: z.string().nullable().openapi({
        description: "The request field or parameter at fault, e.g. `messages[0].role` or `file_name`.",
      }),
      code: z.enum(codes).openapi({ description: "Hearth's error code; it decides the HTTP status." }),
    }),
  })
  .openapi("Error", {
    description: "Every error has this shape, as in the OpenAI API.",
    examples: [
      {
        error: {
          message: "Invalid temperature: Too big: expected number to be <=2",
          type: "invalid_request_error",
          param: "temperature",
          code: "invalid_request",
        },
      },
    ],
  });
export type ErrorBody = z.infer<typeof errorSchema>;

/** Every /v1 operation but the public ones can fail these ways: the key is checked in the database. */
export const AUTHENTICATED: Reasons = {
  unauthorized: "No API key, or an unknown or revoked one (`Authorization: Bearer <API key>`).",
  unavailable: "The database is unavailable; retry shortly.",
};

/** For operations with a JSON body (the limits apply to every /v1 request but file uploads). */
export const JSON_BODY_LIMIT: Reasons = {
  request_timeout:
    "The request body did not arrive within `HEARTH_BODY_TIMEOUT_MS` of its headers; the connection is closed.",
  payload_too_large: "The request body is larger than `HEARTH_MAX_BODY_BYTES`.",
};

/** One response per status; several codes of one status (429) share it, each explained. */
export function errorResponses(reasons: Reasons) {
  const byStatus = new Map<number, string[]>();
  for (const [code, why] of Object.entries(reasons) as [ErrorCode, string][]) {
    const { status, type } = errorCodes[code];
    const lines = byStatus.get(status) ?? [];
    lines.push(`\`${code}\` (\`${type}\`): ${why}`);
    byStatus.set(status, lines);
  }
  const sorted = [...byStatus].sort(([a], [b]) => a - b);
  return Object.fromEntries(
    sorted.map(([status, lines]) => [
      status,
      { description: lines.join("\n\n"), content: { "application/json": { schema: errorSchema } } },
    ]),
  );
}
