import { errorCodes, type ErrorCode } from "../../errors.js";
import { schemaRef, type JsonSchema } from "./json-schema.js";

/** One OpenAPI operation, with its error responses built from the codes in errors.ts. */

export type Reasons = Partial<Record<ErrorCode, string>>;

export interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  /** The success responses (and any non-error-body ones), by status. */
  responses: Record<string, JsonSchema>;
  /** Why the operation fails, by error code; each becomes a response of the code's status. */
  errors?: Reasons;
  /** No API key needed (the health checks and the OpenAPI document). */
  public?: boolean;
}

/** Every /v1 operation can fail these ways: the key middleware checks the key in the database. */
const AUTHENTICATED: Reasons = {
  unauthorized: "No API key, or an unknown or revoked one (`Authorization: Bearer <API key>`).",
  unavailable: "The database is unavailable; retry shortly.",
};

/** For operations with a JSON body (the limit applies to every /v1 request but file uploads). */
export const JSON_BODY_LIMIT: Reasons = {
  payload_too_large: "The request body is larger than `HEARTH_MAX_BODY_BYTES`.",
};

export const json = (schema: JsonSchema) => ({ "application/json": { schema } });

export const jsonResponse = (description: string, schema: JsonSchema) => ({ description, content: json(schema) });

export const jsonBody = (schema: JsonSchema, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: json(schema),
});

export function operation(spec: OperationSpec): JsonSchema {
  const reasons = spec.public ? (spec.errors ?? {}) : { ...AUTHENTICATED, ...spec.errors };
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    ...(spec.public ? { security: [] } : {}),
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses: { ...spec.responses, ...errorResponses(reasons) },
  };
}

/** One response per status; several codes of one status (429) share it, each explained. */
export function errorResponses(reasons: Reasons): Record<string, JsonSchema> {
  const byStatus = new Map<number, string[]>();
  for (const [code, why] of Object.entries(reasons) as [ErrorCode, string][]) {
    const { status, type } = errorCodes[code];
    const lines = byStatus.get(status) ?? [];
    lines.push(`\`${code}\` (\`${type}\`): ${why}`);
    byStatus.set(status, lines);
  }
  const sorted = [...byStatus].sort(([a], [b]) => a - b);
  return Object.fromEntries(
    sorted.map(([status, lines]) => [String(status), jsonResponse(lines.join("\n\n"), schemaRef("Error"))]),
  );
}

/** The error body, from the codes and types in errors.ts. */
export function errorSchema(): JsonSchema {
  const codes = Object.keys(errorCodes);
  const types = [...new Set(Object.values(errorCodes).map((e) => e.type))];
  return {
    type: "object",
    description: "Every error has this shape, as in the OpenAI API.",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["message", "type", "param", "code"],
        properties: {
          message: { type: "string", description: "What went wrong, for a person." },
          type: { type: "string", enum: types, description: "The OpenAI error type." },
          param: {
            type: ["string", "null"],
            description: "The request field or parameter at fault, e.g. `messages[0].role` or `file_name`.",
          },
          code: { type: "string", enum: codes, description: "Hearth's error code; it decides the HTTP status." },
        },
      },
    },
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
  };
}
